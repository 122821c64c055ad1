"""Test support shipped with the package: op runners, oracles, random graphs."""
