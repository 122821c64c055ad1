// convert-scans-for-ad (a step of rlx-prepare-ad): a scan returning its final carries saves
// its trajectory instead, and each final carry is the trajectory's last row. With
// num_checkpoints = K the trajectory has K rows and the last is K - 1 (RLX narrows row
// length - 1, past the end).
// RUN: rlx-opt %s --split-input-file -p 'rlx-prepare-ad' | filecheck %s

func.func @f(%a0: tensor<3xf32>, %b0: tensor<?x2x?xf32>, %xs: tensor<5x3xf32>) -> (tensor<3xf32>, tensor<?x2x?xf32>) {
  %a, %b = mir.scan init(%a0, %b0 : tensor<3xf32>, tensor<?x2x?xf32>) xs(%xs : tensor<5x3xf32>) length = 5 -> tensor<3xf32>, tensor<?x2x?xf32> {
  ^bb0(%x: tensor<3xf32>, %y: tensor<?x2x?xf32>, %t: tensor<3xf32>):
    %s = mir.add %x, %t : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    %z = mir.sin %y : (tensor<?x2x?xf32>) -> tensor<?x2x?xf32>
    mir.yield %s, %z : tensor<3xf32>, tensor<?x2x?xf32>
  }
  func.return %a, %b : tensor<3xf32>, tensor<?x2x?xf32>
}
// CHECK-LABEL: func.func @f(
// CHECK-NEXT:    %a_trajectory, %b_trajectory = mir.scan init(%a0, %b0 : tensor<3xf32>, tensor<?x2x?xf32>) xs(%xs : tensor<5x3xf32>) length = 5 save_trajectory -> tensor<5x3xf32>, tensor<5x?x2x?xf32> {
// CHECK:         }
// CHECK-NEXT:    [[A:%.*]] = mir.narrow %a_trajectory axis = 0 start = 4 len = 1 : (tensor<5x3xf32>) -> tensor<1x3xf32>
// CHECK-NEXT:    %a = mir.reshape [[A]] new_shape = [3] : (tensor<1x3xf32>) -> tensor<3xf32>
// CHECK-NEXT:    [[B:%.*]] = mir.narrow %b_trajectory axis = 0 start = 4 len = 1 : (tensor<5x?x2x?xf32>) -> tensor<1x?x2x?xf32>
// CHECK-NEXT:    %b = mir.reduce sum [[B]] axes = [0] : (tensor<1x?x2x?xf32>) -> tensor<?x2x?xf32>
// CHECK-NEXT:    func.return %a, %b

// -----

func.func @f(%h0: tensor<3xf32>) -> tensor<3xf32> {
  %h = mir.scan init(%h0 : tensor<3xf32>) length = 10 num_checkpoints = 3 -> tensor<3xf32> {
  ^bb0(%x: tensor<3xf32>):
    %s = mir.sin %x : (tensor<3xf32>) -> tensor<3xf32>
    mir.yield %s : tensor<3xf32>
  }
  func.return %h : tensor<3xf32>
}
// CHECK-LABEL: func.func @f(
// CHECK-NEXT:    %h_trajectory = mir.scan init(%h0 : tensor<3xf32>) length = 10 save_trajectory num_checkpoints = 3 -> tensor<3x3xf32> {
// CHECK:         }
// CHECK-NEXT:    [[R:%.*]] = mir.narrow %h_trajectory axis = 0 start = 2 len = 1 : (tensor<3x3xf32>) -> tensor<1x3xf32>
// CHECK-NEXT:    %h = mir.reshape [[R]] new_shape = [3] : (tensor<1x3xf32>) -> tensor<3xf32>
