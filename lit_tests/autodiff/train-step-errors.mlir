// rlx-train-step's errors: options PyTorch's optimizers reject, and graphs it cannot train.
// RUN: rlx-opt %s --split-input-file --verify-diagnostics -p 'rlx-train-step{func=f}'
// RUN: not rlx-opt %s -p 'rlx-train-step{func=f optimizer=adam}' 2>&1 | filecheck %s --check-prefix=OPTIMIZER
// RUN: not rlx-opt %s -p 'rlx-train-step{func=f beta2=1.0}' 2>&1 | filecheck %s --check-prefix=BETA
// RUN: not rlx-opt %s -p 'rlx-train-step{func=f momentum=0.9}' 2>&1 | filecheck %s --check-prefix=MOMENTUM
// RUN: not rlx-opt %s -p 'rlx-train-step{func=f optimizer=sgd lr=-1.0}' 2>&1 | filecheck %s --check-prefix=LR
// RUN: not rlx-opt %s --split-input-file -p 'rlx-train-step{func=g}' 2>&1 | filecheck %s --check-prefix=FUNC
// OPTIMIZER: error: invalid options for pass 'rlx-train-step': optimizer=adam: 'adam' is not one of adamw, sgd; did you mean 'adamw'?
// BETA: error: invalid options for pass 'rlx-train-step': beta2=1.0: must be in [0, 1)
// MOMENTUM: error: invalid options for pass 'rlx-train-step': momentum=0.9: optimizer=adamw has no momentum (beta1 is its)
// LR: error: invalid options for pass 'rlx-train-step': lr=-1.0: the learning rate must be >= 0
// FUNC: error: 'rlx-train-step' no function named @g (functions: @f)
// FUNC-NOT: Traceback

// expected-error@+1 {{'rlx-train-step' @f has no rlx.param argument: mark the parameters to train with rlx.param}}
func.func @f(%x: tensor<3xf32>) -> tensor<f32> {
  %l = mir.reduce sum %x axes = [0] : (tensor<3xf32>) -> tensor<f32>
  func.return %l : tensor<f32>
}

// -----

func.func @f(%w: tensor<3xf32> {rlx.param}) -> tensor<f32> {
  %l = mir.reduce sum %w axes = [0] : (tensor<3xf32>) -> tensor<f32>
  func.return %l : tensor<f32>
}

// expected-error@+1 {{'rlx-train-step' cannot add @f_train_step: the symbol already exists}}
func.func @f_train_step() {
  func.return
}
