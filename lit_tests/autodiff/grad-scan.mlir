// rlx-grad of a mir.scan (after rlx-prepare-ad): one mir.scan_backward returns the gradient
// of the initial carry and of every xs (a materialised bcast is summed over the steps by
// mir.expand's rule). Its vjp body is the scan body differentiated by the VJP engine:
// (carry, x_t..., d_next) -> (d_carry, d_x_t...). A checkpointed scan keeps K rows and
// attaches its forward body for the recompute.
// RUN: rlx-opt %s --split-input-file -p 'rlx-prepare-ad,rlx-grad{func=f}' | filecheck %s

func.func @f(%h0: tensor<2x3xf32> {rlx.param}, %w: tensor<3x3xf32> {rlx.param}, %xs: tensor<4x2x3xf32> {rlx.param}) -> tensor<2x3xf32> {
  %h = mir.scan init(%h0 : tensor<2x3xf32>) bcasts(%w : tensor<3x3xf32>) xs(%xs : tensor<4x2x3xf32>) length = 4 -> tensor<2x3xf32> {
  ^bb0(%c: tensor<2x3xf32>, %v: tensor<3x3xf32>, %x: tensor<2x3xf32>):
    %p = mir.matmul %c, %v : (tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<2x3xf32>
    %q = mir.add %p, %x : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    %n = mir.tanh %q : (tensor<2x3xf32>) -> tensor<2x3xf32>
    mir.yield %n : tensor<2x3xf32>
  }
  func.return %h : tensor<2x3xf32>
}
// CHECK-LABEL: func.func @f_grad(
// CHECK-SAME:    %d_output: tensor<2x3xf32> {rlx.name = "d_output"})
// CHECK:         %w_steps = mir.expand %w target_shape = [4, 3, 3]
// CHECK-NEXT:    %h_trajectory = mir.scan init(%h0 : tensor<2x3xf32>) xs(%w_steps, %xs : tensor<4x3x3xf32>, tensor<4x2x3xf32>) length = 4 save_trajectory -> tensor<4x2x3xf32> {
// CHECK:         [[UP:%.*]] = mir.concat {{.*}} axis = 0 : (tensor<3x2x3xf32>, tensor<1x2x3xf32>) -> tensor<4x2x3xf32>
// CHECK-NEXT:    %d_h0, [[DW:%.*]], %d_xs = mir.scan_backward init(%h0 : tensor<2x3xf32>) trajectory(%h_trajectory : tensor<4x2x3xf32>) upstream([[UP]] : tensor<4x2x3xf32>) xs(%w_steps, %xs : tensor<4x3x3xf32>, tensor<4x2x3xf32>) length = 4 save_trajectory -> tensor<2x3xf32>, tensor<4x3x3xf32>, tensor<4x2x3xf32> vjp {
// CHECK-NEXT:    ^bb0(%c: tensor<2x3xf32>, %v: tensor<3x3xf32>, %x: tensor<2x3xf32>, %d_n: tensor<2x3xf32>):
// CHECK-NEXT:      %p = mir.matmul %c, %v
// CHECK-NEXT:      %q = mir.add %p, %x
// CHECK-NEXT:      [[DQ:%.*]] = mir.activation_backward tanh %q, %d_n
// CHECK:           mir.yield {{%.*}}, {{%.*}}, [[DQ]] : tensor<2x3xf32>, tensor<3x3xf32>, tensor<2x3xf32>
// CHECK-NEXT:    }{{$}}
// CHECK-NEXT:    %d_w = mir.reduce sum [[DW]] axes = [0] : (tensor<4x3x3xf32>) -> tensor<3x3xf32>
// CHECK-NEXT:    func.return %h, %d_h0, %d_w, %d_xs

// -----

func.func @f(%h0: tensor<3xf32> {rlx.param}) -> tensor<3xf32> {
  %h = mir.scan init(%h0 : tensor<3xf32>) length = 10 num_checkpoints = 3 -> tensor<3xf32> {
  ^bb0(%c: tensor<3xf32>):
    %n = mir.sin %c : (tensor<3xf32>) -> tensor<3xf32>
    mir.yield %n : tensor<3xf32>
  }
  func.return %h : tensor<3xf32>
}
// CHECK-LABEL: func.func @f_grad(
// CHECK:         %h_trajectory = mir.scan init(%h0 : tensor<3xf32>) length = 10 save_trajectory num_checkpoints = 3 -> tensor<3x3xf32> {
// CHECK:         %d_h0 = mir.scan_backward init(%h0 : tensor<3xf32>) trajectory(%h_trajectory : tensor<3x3xf32>) upstream({{%.*}} : tensor<3x3xf32>) length = 10 save_trajectory num_checkpoints = 3 -> tensor<3xf32> vjp {
// CHECK-NEXT:    ^bb0(%c: tensor<3xf32>, %d_n: tensor<3xf32>):
// CHECK-NEXT:      [[D:%.*]] = mir.activation_backward sin %c, %d_n
// CHECK-NEXT:      mir.yield [[D]] : tensor<3xf32>
// CHECK-NEXT:    } forward {
// CHECK-NEXT:    ^bb0([[C:%.*]]: tensor<3xf32>):
// CHECK-NEXT:      %n = mir.sin [[C]]
// CHECK-NEXT:      mir.yield %n : tensor<3xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %h, %d_h0
