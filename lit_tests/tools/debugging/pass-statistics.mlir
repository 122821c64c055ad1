// --mlir-pass-statistics reports each pass's counters to stderr, as mlir-opt does:
// `pipeline` (default) follows the pipeline's nesting, `list` merges passes by name.
// RUN: rlx-opt %s -p 'rlx-dce,func.func(rlx-canonicalize),rlx-amp{policy=always-f16}' --mlir-pass-statistics 2>&1 >/dev/null | filecheck %s --check-prefix=PIPELINE
// RUN: rlx-opt %s -p 'rlx-dce,func.func(rlx-canonicalize),rlx-amp{policy=always-f16}' --mlir-pass-statistics --mlir-pass-statistics-display=list 2>&1 >/dev/null | filecheck %s --check-prefix=LIST
// The report stays out of the IR stream.
// RUN: rlx-opt %s -p rlx-dce --mlir-pass-statistics 2>/dev/null --verify-roundtrip | filecheck %s --check-prefix=OUT

// PIPELINE:      ===-------------------------------------------------------------------------===
// PIPELINE-NEXT: {{^                         }}... Pass statistics report ...
// PIPELINE-NEXT: ===-------------------------------------------------------------------------===
// PIPELINE-NEXT: {{^}}rlx-dce
// PIPELINE-NEXT: {{^}}  (S) 1 num-erased - Number of dead ops erased
// PIPELINE-NEXT: {{^}}'func.func' Pipeline
// PIPELINE-NEXT: {{^}}  rlx-canonicalize
// PIPELINE-NEXT: {{^}}    (S) 2 AddOfZero                - Number of rewrites by the AddOfZero pattern
// PIPELINE-NEXT: {{^}}    (S) 0 AttentionOfRepeatedKv    - Number of rewrites by the AttentionOfRepeatedKv pattern
// PIPELINE-NEXT: {{^}}    (S) 0 ConcatOfOne              - Number of rewrites by the ConcatOfOne pattern
// PIPELINE:      {{^}}    (S) 1 MulByOne                 - Number of rewrites by the MulByOne pattern
// PIPELINE:      {{^}}    (S) 0 WhereOfConstantCondition - Number of rewrites by the WhereOfConstantCondition pattern
// PIPELINE-NEXT: {{^}}rlx-amp
// PIPELINE-NEXT: {{^}}  (S) 1 KeepSignature  - Number of rewrites by the KeepSignature pattern
// PIPELINE-NEXT: {{^}}  (S) 1 RetypeToPolicy - Number of rewrites by the RetypeToPolicy pattern
// PIPELINE-NEXT: {{^}}  (S) 2 num-casts      - Number of casts inserted
// PIPELINE-EMPTY:

// LIST:      ... Pass statistics report ...
// LIST-NEXT: ===
// LIST-NEXT: {{^}}  rlx-amp
// LIST-NEXT: {{^}}    (S) 1 KeepSignature  - Number of rewrites by the KeepSignature pattern
// LIST-NEXT: {{^}}    (S) 1 RetypeToPolicy - Number of rewrites by the RetypeToPolicy pattern
// LIST-NEXT: {{^}}    (S) 2 num-casts      - Number of casts inserted
// LIST-NEXT: {{^}}  rlx-canonicalize
// LIST-NEXT: {{^}}    (S) 2 AddOfZero
// LIST:      {{^}}  rlx-dce
// LIST-NEXT: {{^}}    (S) 1 num-erased - Number of dead ops erased
// LIST-EMPTY:

// OUT: func.func @f
// OUT-NOT: statistics

func.func @f(%a: tensor<2xf32>, %zero: tensor<2xf32>) -> tensor<2xf32> {
  %z = mir.constant dense<-0.0> : tensor<2xf32>
  %one = mir.constant dense<1.0> : tensor<2xf32>
  %0 = mir.add %a, %z : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %1 = mir.mul %0, %one : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %2 = mir.add %1, %z : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %2 : tensor<2xf32>
}

func.func @g(%b: tensor<2xf32>) -> tensor<2xf32> {
  %dead = mir.neg %b : (tensor<2xf32>) -> tensor<2xf32>
  %0 = mir.relu %b : (tensor<2xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
