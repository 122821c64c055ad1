// RUN: rlx-opt %s --split-input-file --verify-diagnostics

// The attributes check their own parameters when they are parsed.

func.func @negative_offset(%x: tensor<16xf32>) -> tensor<16xf32> {
  // expected-error@+1 {{#lir.slot offset must be >= 0, got -64}}
  %0 = mir.exp %x {lir.slot = #lir.slot<offset = -64, size = 64>} : (tensor<16xf32>) -> tensor<16xf32>
  func.return %0 : tensor<16xf32>
}

// -----

func.func @negative_size(%x: tensor<16xf32>) -> tensor<16xf32> {
  // expected-error@+1 {{#lir.slot size must be >= 0, got -1}}
  %0 = mir.exp %x {lir.slot = #lir.slot<offset = 0, size = -1>} : (tensor<16xf32>) -> tensor<16xf32>
  func.return %0 : tensor<16xf32>
}

// -----

func.func @slot_syntax(%x: tensor<16xf32>) -> tensor<16xf32> {
  // expected-error@+1 {{Expected 'in_place'}}
  %0 = mir.exp %x {lir.slot = #lir.slot<offset = 0, size = 64, inplace>} : (tensor<16xf32>) -> tensor<16xf32>
  func.return %0 : tensor<16xf32>
}

// -----

func.func @view_negative(%x: tensor<16xf32>) -> tensor<4x4xf32> {
  // expected-error@+1 {{#lir.view byte_offset must be >= 0, got -4}}
  %0 = mir.reshape %x new_shape = [4, 4] {lir.slot = #lir.view<offset = 0, size = 64, byte_offset = -4>} : (tensor<16xf32>) -> tensor<4x4xf32>
  func.return %0 : tensor<4x4xf32>
}

// -----

func.func @view_before_the_arena(%x: tensor<16xf32>) -> tensor<4x4xf32> {
  // expected-error@+1 {{#lir.view byte_offset 128 exceeds offset 64: the root would start before the arena}}
  %0 = mir.reshape %x new_shape = [4, 4] {lir.slot = #lir.view<offset = 64, size = 64, byte_offset = 128>} : (tensor<16xf32>) -> tensor<4x4xf32>
  func.return %0 : tensor<4x4xf32>
}

// -----

func.func @unknown_phase(%x: tensor<16xf32>) -> tensor<16xf32> {
  // expected-error@+1 {{Expected `prologue`, `steady`, or `epilogue`.}}
  %0 = mir.exp %x {lir.phase = #lir.phase<loop>} : (tensor<16xf32>) -> tensor<16xf32>
  func.return %0 : tensor<16xf32>
}

// -----

func.func @external_takes_no_parameters(%x: tensor<16xf32>) -> tensor<16xf32> {
  // expected-error@+1 {{#lir.external takes no parameters}}
  %0 = mir.exp %x {lir.slot = #lir.external<0>} : (tensor<16xf32>) -> tensor<16xf32>
  func.return %0 : tensor<16xf32>
}
