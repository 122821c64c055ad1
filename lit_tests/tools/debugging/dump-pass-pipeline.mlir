// --dump-pass-pipeline prints the parsed pipeline to stderr with every option's
// value spelled out, in the form --pass-pipeline accepts back.
// RUN: rlx-opt %s -p 'func.func(cse),rlx-dce,rlx-lower-hir{policy=fusable},rlx-plan-memory' --dump-pass-pipeline 2>&1 >/dev/null | filecheck %s
// CHECK: builtin.module(func.func(cse),rlx-dce,rlx-lower-hir{policy="fusable"},rlx-plan-memory{alignment=64 {{.*}}strategy="auto"{{.*}}})

// RUN: rlx-opt %s -p 'func.func(cse),rlx-dce,rlx-lower-hir{policy=fusable},rlx-plan-memory' --dump-pass-pipeline 2>%t.pipeline >%t.first
// RUN: xargs -d "\n" -I{} rlx-opt %s --pass-pipeline={} --dump-pass-pipeline < %t.pipeline 2>%t.again >%t.second
// RUN: diff %t.pipeline %t.again
// RUN: diff %t.first %t.second

func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = mir.relu %a : (tensor<2xf32>) -> tensor<2xf32>
  %1 = mir.relu %a : (tensor<2xf32>) -> tensor<2xf32>
  %2 = mir.add %0, %1 : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %2 : tensor<2xf32>
}
