// Pass option values are written as in MLIR, without quotes, even when they
// hold '=' or '?': with -p, with --pass-pipeline, and inside func.func(...).
// Quoted values keep working and mean the same.
// RUN: rlx-opt %s -p 'rlx-specialize{shapes=x=2x128,w=128x64}' | filecheck %s
// RUN: rlx-opt %s --pass-pipeline='builtin.module(rlx-specialize{shapes=x=2x128,w=128x64})' | filecheck %s
// RUN: rlx-opt %s -p 'func.func(rlx-specialize{shapes=x=2x128,w=128x64 func=mlp})' | filecheck %s
// RUN: rlx-opt %s --pass-pipeline='builtin.module(func.func(rlx-specialize{shapes=x=2x128,w=128x64}),rlx-dce)' | filecheck %s
// RUN: rlx-opt %s -p 'rlx-specialize{shapes="x=2x128","w=128x64"}' | filecheck %s
// A '?' keeps a dim dynamic.
// RUN: rlx-opt %s -p 'rlx-specialize{shapes=x=?x128,w=128x64}' | filecheck %s --check-prefix=KEEP
// Both spellings give the same canonical pipeline.
// RUN: rlx-opt %s -p 'func.func(rlx-specialize{shapes=x=2x128,w=128x64})' --dump-pass-pipeline 2>&1 >/dev/null | filecheck %s --check-prefix=DUMP
// RUN: rlx-opt %s -p 'func.func(rlx-specialize{shapes="x=2x128","w=128x64"})' --dump-pass-pipeline 2>&1 >/dev/null | filecheck %s --check-prefix=DUMP
// --list-passes says how the option is written, and that stock xdsl-opt needs quotes.
// RUN: rlx-opt --list-passes | filecheck %s --check-prefix=LIST

// DUMP: {{^}}builtin.module(func.func(rlx-specialize{shapes="x=2x128","w=128x64" func})){{$}}

// LIST:      {{^}}  rlx-specialize{{$}}
// LIST-NEXT: {{^      [A-Z].+}}
// LIST-NEXT: {{^}}      --shapes=NAME=DIMS,... (default: empty){{$}}
// LIST-NEXT: {{^}}          (in xdsl-opt, quote any value with characters other than letters, digits, _ and -, as in shapes="x=2x8x32"){{$}}
// LIST-NEXT: {{^}}      --func=NAME (optional){{$}}
// LIST-NEXT: {{^}}          (in xdsl-opt, quote any value with characters other than letters, digits, _ and -){{$}}

// CHECK-LABEL: func.func @mlp(%x: tensor<2x128xf32> {rlx.name = "x"}, %w: tensor<128x64xf32> {rlx.name = "w"}) -> tensor<2x64xf32> {
// CHECK-NEXT:    %0 = mir.matmul %x, %w : (tensor<2x128xf32>, tensor<128x64xf32>) -> tensor<2x64xf32>
// CHECK-NEXT:    %1 = mir.relu %0 : (tensor<2x64xf32>) -> tensor<2x64xf32>
// CHECK-NEXT:    func.return %1 : tensor<2x64xf32>

// KEEP-LABEL: func.func @mlp(%x: tensor<?x128xf32> {rlx.name = "x"}, %w: tensor<128x64xf32> {rlx.name = "w"}) -> tensor<?x64xf32> {
// KEEP-NEXT:    %0 = mir.matmul %x, %w : (tensor<?x128xf32>, tensor<128x64xf32>) -> tensor<?x64xf32>
func.func @mlp(%x: tensor<?x?xf32> {rlx.name = "x"}, %w: tensor<?x?xf32> {rlx.name = "w"}) -> tensor<?x?xf32> {
  %0 = mir.matmul %x, %w : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %1 = mir.relu %0 : (tensor<?x?xf32>) -> tensor<?x?xf32>
  func.return %1 : tensor<?x?xf32>
}
