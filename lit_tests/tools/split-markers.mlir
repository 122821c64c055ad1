// --split-input-file splits at every split marker outside string literals (a
// marker in a comment splits, as it is a comment itself).
// RUN: rlx-opt %s --split-input-file | filecheck %s

// CHECK-LABEL: func.func @first
func.func @first() {
  func.return
}

// -----

// The marker inside this string is text.
// CHECK-LABEL: func.func @marker_in_string
// CHECK-SAME: {note = "a {{//}} ----- b"}
func.func @marker_in_string() attributes {note = "a // ----- b"} {
  func.return
}
