// RUN: rlx-opt %s -p 'rlx-lower-hir{policy=fusable}' --dump-pass-pipeline -o %t 2>&1 | filecheck %s --check-prefix=DUMP
// RUN: not rlx-opt %s -p 'rlx-lower-hir{policy=eager}' 2>&1 | filecheck %s --check-prefix=POLICY
// RUN: rlx-opt --list-passes | filecheck %s --check-prefix=LIST

// DUMP: builtin.module(rlx-lower-hir{policy="fusable"})
// A bad policy is a usage error, before any IR is read.
// POLICY: rlx-opt: error: invalid options for pass 'rlx-lower-hir': policy=eager: 'eager' is not one of direct, fusable
// LIST: rlx-lower-hir
// LIST-NEXT: Expand HIR block ops into MIR
// LIST-NEXT: --policy=direct|fusable (default: "direct")

func.func @f(%x: tensor<2x8xf32>, %g: tensor<8xf32>) -> tensor<2x8xf32> {
  %0 = hir.rms_norm %x, %g, %g eps = 1.0e-6 : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  func.return %0 : tensor<2x8xf32>
}
