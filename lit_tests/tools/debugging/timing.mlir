// --mlir-timing (alias --time-passes) reports to stderr in mlir-opt's layout:
// tree (default) nests passes as the pipeline nests them, list sums and sorts.
// Verifying the input, and what each pass that changed the IR left, is `Verifier`
// (rlx-dce finds nothing to do after cse, so nothing is verified after it).
// RUN: rlx-opt %s -p 'func.func(cse),rlx-dce' --mlir-timing 2>&1 >/dev/null | filecheck %s --check-prefix=TREE
// RUN: rlx-opt %s -p 'func.func(cse),rlx-dce' --time-passes --mlir-timing-display=tree 2>&1 >/dev/null | filecheck %s --check-prefix=TREE
// RUN: rlx-opt %s -p 'func.func(cse),rlx-dce' --mlir-timing --mlir-timing-display=list 2>&1 >/dev/null | filecheck %s --check-prefix=LIST
// The report never enters the IR stream, so the output still pipes into rlx-run.
// RUN: rlx-opt %s -p 'func.func(cse),rlx-dce' --time-passes --print-between-passes | rlx-run - --func f | filecheck %s --check-prefix=EXEC

// TREE:      ===-------------------------------------------------------------------------===
// TREE-NEXT: {{^                         }}... Execution time report ...
// TREE-NEXT: ===-------------------------------------------------------------------------===
// TREE-NEXT:   Total Execution Time: {{[0-9]+[.][0-9][0-9][0-9][0-9]}} seconds
// TREE-EMPTY:
// TREE-NEXT:   ----User Time----  ----Wall Time----  ----Name----
// TREE-NEXT: {{^ +[0-9]+[.][0-9][0-9][0-9][0-9] \( *[0-9]+\.[0-9]%\) +[0-9]+[.][0-9][0-9][0-9][0-9] \( *[0-9]+\.[0-9]%\)}}  Parser
// TREE-NEXT: {{^ +[0-9.]+ \( *[0-9.]+%\) +[0-9.]+ \( *[0-9.]+%\)}}  Verifier
// TREE-NEXT: {{^ +[0-9.]+ \( *[0-9.]+%\) +[0-9.]+ \( *[0-9.]+%\)}}  'func.func' Pipeline
// TREE-NEXT: {{^ +[0-9.]+ \( *[0-9.]+%\) +[0-9.]+ \( *[0-9.]+%\)}}    cse
// TREE-NEXT: {{^ +[0-9.]+ \( *[0-9.]+%\) +[0-9.]+ \( *[0-9.]+%\)}}    Verifier
// TREE-NEXT: {{^ +[0-9.]+ \( *[0-9.]+%\) +[0-9.]+ \( *[0-9.]+%\)}}  rlx-dce
// TREE-NEXT: {{^ +[0-9.]+ \( *[0-9.]+%\) +[0-9.]+ \( *[0-9.]+%\)}}  Output
// TREE-NEXT: {{^ +[0-9.]+ \( *[0-9.]+%\) +[0-9.]+ \( *[0-9.]+%\)}}  Rest
// TREE-NEXT: {{^ +[0-9.]+ \(100.0%\) +[0-9.]+ \(100.0%\)}}  Total

// LIST:      ... Execution time report ...
// LIST:      ----User Time----  ----Wall Time----  ----Name----
// LIST-DAG:  {{^ +[0-9.]+ \( *[0-9.]+%\) +[0-9.]+ \(100.0%\)}}  root
// LIST-DAG:  {{^ +[0-9.]+ \( *[0-9.]+%\) +[0-9.]+ \( *[0-9.]+%\)}}  Parser
// LIST-DAG:  {{^ +[0-9.]+ \( *[0-9.]+%\) +[0-9.]+ \( *[0-9.]+%\)}}  Verifier
// LIST-DAG:  {{^ +[0-9.]+ \( *[0-9.]+%\) +[0-9.]+ \( *[0-9.]+%\)}}  'func.func' Pipeline
// LIST-DAG:  {{^ +[0-9.]+ \( *[0-9.]+%\) +[0-9.]+ \( *[0-9.]+%\)}}  cse
// LIST-DAG:  {{^ +[0-9.]+ \( *[0-9.]+%\) +[0-9.]+ \( *[0-9.]+%\)}}  rlx-dce
// LIST-DAG:  {{^ +[0-9.]+ \( *[0-9.]+%\) +[0-9.]+ \( *[0-9.]+%\)}}  Output
// LIST:      {{^ +[0-9.]+ \( *[0-9.]+%\) +[0-9.]+ \( *[0-9.]+%\)}}  Rest
// LIST-NEXT: {{^ +[0-9.]+ \(100.0%\) +[0-9.]+ \(100.0%\)}}  Total

// EXEC: @f: 1 argument, 1 output (seed 0)
// EXEC-NEXT: out0: shape [2] dtype f32

func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = mir.relu %a : (tensor<2xf32>) -> tensor<2xf32>
  %1 = mir.relu %a : (tensor<2xf32>) -> tensor<2xf32>
  %2 = mir.add %0, %1 : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %2 : tensor<2xf32>
}
