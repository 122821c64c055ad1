// rlx-train-step: @f_train_step(x, w, b, <state per param>, step) -> (loss, new params, new state).
// loss = sum(x w + b), w a matrix and b a scalar.
// RUN: rlx-opt %s -p 'rlx-train-step{func=f optimizer=adamw lr=0.5 beta1=0.5 beta2=0.75 eps=0.25 weight-decay=0.5}' | filecheck %s --check-prefix=ADAMW
// RUN: rlx-opt %s -p 'rlx-train-step{func=f optimizer=sgd lr=0.5 momentum=0.75}' | filecheck %s --check-prefix=SGD
// RUN: rlx-opt %s -p 'rlx-train-step{func=f optimizer=sgd lr=0.5}' | filecheck %s --check-prefix=PLAIN
// RUN: rlx-opt %s -p 'rlx-train-step{func=f},rlx-amp{policy=torch-cuda low=bf16}' | filecheck %s --check-prefix=AMP

func.func @f(%x: tensor<2x3xf32> {rlx.name = "x"}, %w: tensor<3x2xf32> {rlx.name = "w", rlx.param},
             %b: tensor<f32> {rlx.name = "b", rlx.param}) -> tensor<f32> {
  %m = mir.matmul %x, %w : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
  %a = mir.add %m, %b : (tensor<2x2xf32>, tensor<f32>) -> tensor<2x2xf32>
  %l = mir.reduce sum %a axes = [0, 1] : (tensor<2x2xf32>) -> tensor<f32>
  func.return %l : tensor<f32>
}

// The moments come per parameter (first, then second), then the step; @f is left as it was.
// ADAMW-LABEL: func.func @f(
// ADAMW-LABEL: func.func @f_train_step(%x: tensor<2x3xf32> {rlx.name = "x"}, %w: tensor<3x2xf32> {rlx.name = "w", rlx.param}, %b: tensor<f32> {rlx.name = "b", rlx.param},
// ADAMW-SAME:    %m_w: tensor<3x2xf32> {rlx.name = "m_w"}, %v_w: tensor<3x2xf32> {rlx.name = "v_w"}, %m_b: tensor<f32> {rlx.name = "m_b"}, %v_b: tensor<f32> {rlx.name = "v_b"},
// ADAMW-SAME:    %step: tensor<f32> {rlx.name = "step"})
// ADAMW-SAME:    -> (tensor<f32>, tensor<3x2xf32>, tensor<f32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<f32>, tensor<f32>)
// Decoupled weight decay: p * (1 - lr * wd) = p * 0.75.
// ADAMW:         %[[DECAYED:.*]] = mir.mul %w, %[[C075:.*]] :
// ADAMW:         %[[M:.*]] = mir.mul %m_w, %{{.*}} :
// ADAMW:         %new_m_w = mir.add %[[M]], %{{.*}} :
// ADAMW:         %new_v_w = mir.add
// The bias corrections 1 - beta^step, as exp(step * ln beta), once for all parameters of a dtype.
// ADAMW:         mir.constant dense<-0.693147182> : tensor<f32>
// ADAMW:         mir.mul %step,
// ADAMW:         mir.exp
// ADAMW:         mir.constant dense<-0.287682086> : tensor<f32>
// ADAMW:         mir.mul %step,
// ADAMW:         mir.exp
// ADAMW:         mir.sqrt %new_v_w
// ADAMW:         %new_w = mir.sub %[[DECAYED]], %{{.*}} :
// ADAMW-NOT:     mir.mul %step,
// ADAMW:         %new_b = mir.sub
// ADAMW:         func.return %l, %new_w, %new_b, %new_m_w, %new_v_w, %new_m_b, %new_v_b :

// SGD with momentum: one buffer per parameter; b <- momentum * b + g, p <- p - lr * b.
// SGD-LABEL: func.func @f_train_step(
// SGD-SAME:    %momentum_w: tensor<3x2xf32> {rlx.name = "momentum_w"}, %momentum_b: tensor<f32> {rlx.name = "momentum_b"}, %step: tensor<f32> {rlx.name = "step"})
// SGD:         %[[BW:.*]] = mir.mul %momentum_w, %{{.*}} :
// SGD:         %new_momentum_w = mir.add %[[BW]], %d_w :
// SGD:         %[[LRW:.*]] = mir.mul %new_momentum_w, %{{.*}} :
// SGD:         %new_w = mir.sub %w, %[[LRW]] :
// SGD:         func.return %l, %new_w, %new_b, %new_momentum_w, %new_momentum_b :

// Plain SGD has no state: only the step follows the arguments.
// PLAIN-LABEL: func.func @f_train_step(%x: tensor<2x3xf32> {rlx.name = "x"}, %w: tensor<3x2xf32> {rlx.name = "w", rlx.param}, %b: tensor<f32> {rlx.name = "b", rlx.param}, %step: tensor<f32> {rlx.name = "step"})
// PLAIN-SAME:    -> (tensor<f32>, tensor<3x2xf32>, tensor<f32>)
// PLAIN:         %[[LRW:.*]] = mir.mul %d_w, %{{.*}} :
// PLAIN:         %new_w = mir.sub %w, %[[LRW]] :

// Mixed precision: the matmuls of the forward and backward run in bf16, the master weights,
// the moments and the update stay f32.
// AMP-LABEL: func.func @f_train_step(
// AMP:         mir.matmul %x_bf16, %w_bf16 : (tensor<2x3xbf16>, tensor<3x2xbf16>) -> tensor<2x2xbf16>
// AMP:         %d_w = mir.dot_general {{.*}} -> tensor<3x2xbf16>
// AMP:         %new_m_w = mir.add {{.*}} -> tensor<3x2xf32>
// AMP:         %new_w = mir.sub {{.*}} -> tensor<3x2xf32>
// AMP:         func.return {{.*}} : tensor<f32>, tensor<3x2xf32>, tensor<f32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<f32>, tensor<f32>
