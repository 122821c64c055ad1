// RUN: rlx-opt %s --split-input-file --verify-diagnostics

// One chunk per rule of the plan verifier. Unless a chunk says otherwise, the
// function is `%0 = exp(%x)` with %x at [0, 64) and %0 at [64, 128).

// expected-error@+2 {{'lir.plan' alignment must be a power of two, got 48}}
func.func @alignment(%x: tensor<16xf32> {lir.slot = #lir.slot<offset = 0, size = 64>}) -> (tensor<16xf32> {lir.slot = #lir.slot<offset = 64, size = 64>}) {
  lir.plan arena_bytes = 128 naive_bytes = 128 lower_bound_bytes = 128 alignment = 48
  %0 = mir.exp %x {lir.slot = #lir.slot<offset = 64, size = 64>, lir.phase = #lir.phase<steady>} : (tensor<16xf32>) -> tensor<16xf32>
  func.return %0 : tensor<16xf32>
}

// -----

// expected-error@+2 {{'lir.plan' arena_bytes must be >= 0, got -64}}
func.func @negative_arena(%x: tensor<16xf32> {lir.slot = #lir.slot<offset = 0, size = 64>}) -> (tensor<16xf32> {lir.slot = #lir.slot<offset = 64, size = 64>}) {
  lir.plan arena_bytes = -64 naive_bytes = 128 lower_bound_bytes = 128 alignment = 64
  %0 = mir.exp %x {lir.slot = #lir.slot<offset = 64, size = 64>, lir.phase = #lir.phase<steady>} : (tensor<16xf32>) -> tensor<16xf32>
  func.return %0 : tensor<16xf32>
}

// -----

func.func @not_first(%x: tensor<16xf32> {lir.slot = #lir.slot<offset = 0, size = 64>}) -> (tensor<16xf32> {lir.slot = #lir.slot<offset = 64, size = 64>}) {
  %0 = mir.exp %x {lir.slot = #lir.slot<offset = 64, size = 64>, lir.phase = #lir.phase<steady>} : (tensor<16xf32>) -> tensor<16xf32>
  // expected-error@+1 {{'lir.plan' must be the first op of @not_first}}
  lir.plan arena_bytes = 128 naive_bytes = 128 lower_bound_bytes = 128 alignment = 64
  func.return %0 : tensor<16xf32>
}

// -----

builtin.module {
  // expected-error@+1 {{'lir.plan' expects parent op 'func.func'}}
  lir.plan arena_bytes = 0 naive_bytes = 0 lower_bound_bytes = 0 alignment = 64
}

// -----

func.func @no_placement(%x: tensor<16xf32> {lir.slot = #lir.slot<offset = 0, size = 64>}) -> (tensor<16xf32> {lir.slot = #lir.slot<offset = 64, size = 64>}) {
  lir.plan arena_bytes = 128 naive_bytes = 128 lower_bound_bytes = 128 alignment = 64
  // expected-error@+1 {{'lir.plan' %0 has no placement (lir.slot): the plan does not match the function; re-run rlx-plan-memory}}
  %0 = mir.exp %x {lir.phase = #lir.phase<steady>} : (tensor<16xf32>) -> tensor<16xf32>
  func.return %0 : tensor<16xf32>
}

// -----

func.func @not_a_placement(%x: tensor<16xf32> {lir.slot = #lir.slot<offset = 0, size = 64>}) -> (tensor<16xf32> {lir.slot = #lir.slot<offset = 64, size = 64>}) {
  lir.plan arena_bytes = 128 naive_bytes = 128 lower_bound_bytes = 128 alignment = 64
  // expected-error@+1 {{'lir.plan' lir.slot of %0 must be a #lir.slot, #lir.view or #lir.external, got 64 : i64}}
  %0 = mir.exp %x {lir.slot = 64 : i64, lir.phase = #lir.phase<steady>} : (tensor<16xf32>) -> tensor<16xf32>
  func.return %0 : tensor<16xf32>
}

// -----

func.func @one_placement_for_two_results(%x: tensor<16xf32> {lir.slot = #lir.slot<offset = 0, size = 64>}) -> (tensor<2xi64> {lir.slot = #lir.slot<offset = 64, size = 16>}) {
  lir.plan arena_bytes = 192 naive_bytes = 192 lower_bound_bytes = 192 alignment = 64
  // expected-error@+1 {{'lir.plan' lir.slot of an op with 2 results must be an array with one placement per result}}
  %v, %i = mir.topk %x k = 2 {lir.slot = #lir.slot<offset = 64, size = 16>, lir.phase = #lir.phase<epilogue>} : (tensor<16xf32>) -> (tensor<2xf32>, tensor<2xi64>)
  func.return %i : tensor<2xi64>
}

// -----

func.func @view_of_a_computed_value(%x: tensor<16xf32> {lir.slot = #lir.slot<offset = 0, size = 64>}) -> (tensor<16xf32> {lir.slot = #lir.view<offset = 0, size = 64, byte_offset = 0>}) {
  lir.plan arena_bytes = 64 naive_bytes = 64 lower_bound_bytes = 64 alignment = 64
  // expected-error@+1 {{'lir.plan' %0 is placed as a view, but 'mir.exp' computes a new buffer (only reshape, same-dtype cast and contiguous narrow alias their operand)}}
  %0 = mir.exp %x {lir.slot = #lir.view<offset = 0, size = 64, byte_offset = 0>, lir.phase = #lir.phase<steady>} : (tensor<16xf32>) -> tensor<16xf32>
  func.return %0 : tensor<16xf32>
}

// -----

func.func @view_of_an_external_value(%w: tensor<16xf32> {rlx.param, lir.slot = #lir.external}) -> (tensor<4x4xf32> {lir.slot = #lir.view<offset = 0, size = 64, byte_offset = 0>}) {
  lir.plan arena_bytes = 64 naive_bytes = 0 lower_bound_bytes = 0 alignment = 64
  // expected-error@+1 {{'lir.plan' %0 is a view of %w, which is outside the arena: it must be #lir.external too}}
  %0 = mir.reshape %w new_shape = [4, 4] {lir.slot = #lir.view<offset = 0, size = 64, byte_offset = 0>, lir.phase = #lir.phase<steady>} : (tensor<16xf32>) -> tensor<4x4xf32>
  func.return %0 : tensor<4x4xf32>
}

// -----

func.func @computed_value_outside_the_arena(%x: tensor<16xf32> {lir.slot = #lir.slot<offset = 0, size = 64>}) -> (tensor<16xf32> {lir.slot = #lir.external}) {
  lir.plan arena_bytes = 64 naive_bytes = 64 lower_bound_bytes = 64 alignment = 64
  // expected-error@+1 {{'lir.plan' %0 is computed by the function, so it must live in the arena, not be #lir.external}}
  %0 = mir.exp %x {lir.slot = #lir.external, lir.phase = #lir.phase<steady>} : (tensor<16xf32>) -> tensor<16xf32>
  func.return %0 : tensor<16xf32>
}

// -----

func.func @no_phase(%x: tensor<16xf32> {lir.slot = #lir.slot<offset = 0, size = 64>}) -> (tensor<16xf32> {lir.slot = #lir.slot<offset = 64, size = 64>}) {
  lir.plan arena_bytes = 128 naive_bytes = 128 lower_bound_bytes = 128 alignment = 64
  // expected-error@+1 {{'lir.plan' 'mir.exp' has no lir.phase (expected #lir.phase<steady>); re-run rlx-plan-memory}}
  %0 = mir.exp %x {lir.slot = #lir.slot<offset = 64, size = 64>} : (tensor<16xf32>) -> tensor<16xf32>
  func.return %0 : tensor<16xf32>
}

// -----

// After the last compute op (the matmul) comes the epilogue.
func.func @wrong_phase(%x: tensor<4x4xf32> {lir.slot = #lir.slot<offset = 0, size = 64>}) -> (tensor<4x4xf32> {lir.slot = #lir.slot<offset = 64, size = 64, in_place>}) {
  lir.plan arena_bytes = 128 naive_bytes = 192 lower_bound_bytes = 128 alignment = 64
  %0 = mir.matmul %x, %x {lir.slot = #lir.slot<offset = 64, size = 64>, lir.phase = #lir.phase<steady>} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  // expected-error@+1 {{'lir.plan' 'mir.exp' is in phase epilogue, not steady (constants are prologue, top-k and what follows the last compute or top-k op are epilogue)}}
  %1 = mir.exp %0 {lir.slot = #lir.slot<offset = 64, size = 64, in_place>, lir.phase = #lir.phase<steady>} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  func.return %1 : tensor<4x4xf32>
}

// -----

func.func @wrong_size(%x: tensor<16xf32> {lir.slot = #lir.slot<offset = 0, size = 64>}) -> (tensor<16xf32> {lir.slot = #lir.slot<offset = 64, size = 32>}) {
  lir.plan arena_bytes = 128 naive_bytes = 128 lower_bound_bytes = 128 alignment = 64
  // expected-error@+1 {{'lir.plan' %0 has type tensor<16xf32> (64 bytes), but its placement says size = 32}}
  %0 = mir.exp %x {lir.slot = #lir.slot<offset = 64, size = 32>, lir.phase = #lir.phase<steady>} : (tensor<16xf32>) -> tensor<16xf32>
  func.return %0 : tensor<16xf32>
}

// -----

func.func @misaligned(%x: tensor<16xf32> {lir.slot = #lir.slot<offset = 0, size = 64>}) -> (tensor<16xf32> {lir.slot = #lir.slot<offset = 96, size = 64>}) {
  lir.plan arena_bytes = 192 naive_bytes = 128 lower_bound_bytes = 128 alignment = 64
  // expected-error@+1 {{'lir.plan' slot of %0 at offset 96 is not aligned to 64 bytes}}
  %0 = mir.exp %x {lir.slot = #lir.slot<offset = 96, size = 64>, lir.phase = #lir.phase<steady>} : (tensor<16xf32>) -> tensor<16xf32>
  func.return %0 : tensor<16xf32>
}

// -----

// An argument's slot: the error is at the function.
// expected-error@+1 {{'lir.plan' slot of %x [128, 192) lies outside the arena of 128 bytes}}
func.func @outside_the_arena(%x: tensor<16xf32> {lir.slot = #lir.slot<offset = 128, size = 64>}) -> (tensor<16xf32> {lir.slot = #lir.slot<offset = 64, size = 64>}) {
  lir.plan arena_bytes = 128 naive_bytes = 128 lower_bound_bytes = 128 alignment = 64
  %0 = mir.exp %x {lir.slot = #lir.slot<offset = 64, size = 64>, lir.phase = #lir.phase<steady>} : (tensor<16xf32>) -> tensor<16xf32>
  func.return %0 : tensor<16xf32>
}

// -----

// A view outside its root is one whose byte_offset is not the one its op implies.
func.func @view_outside_its_root(%x: tensor<4x4xf32> {lir.slot = #lir.slot<offset = 0, size = 64>}) -> (tensor<2x4xf32> {lir.slot = #lir.slot<offset = 64, size = 32>}) {
  lir.plan arena_bytes = 128 naive_bytes = 128 lower_bound_bytes = 128 alignment = 64
  // expected-error@+1 {{'lir.plan' view %0 starts 32 bytes into its root %x, not byte_offset = 48}}
  %0 = mir.narrow %x axis = 0 start = 2 len = 2 {lir.slot = #lir.view<offset = 48, size = 32, byte_offset = 48>, lir.phase = #lir.phase<steady>} : (tensor<4x4xf32>) -> tensor<2x4xf32>
  %1 = mir.exp %0 {lir.slot = #lir.slot<offset = 64, size = 32>, lir.phase = #lir.phase<steady>} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  func.return %1 : tensor<2x4xf32>
}

// -----

func.func @view_offset(%x: tensor<4x4xf32> {lir.slot = #lir.slot<offset = 0, size = 64>}) -> (tensor<2x4xf32> {lir.slot = #lir.slot<offset = 64, size = 32>}) {
  lir.plan arena_bytes = 128 naive_bytes = 128 lower_bound_bytes = 128 alignment = 64
  // expected-error@+1 {{'lir.plan' view %0 must be at offset 32 (root %x at 0 + 32), not 64}}
  %0 = mir.narrow %x axis = 0 start = 2 len = 2 {lir.slot = #lir.view<offset = 64, size = 32, byte_offset = 32>, lir.phase = #lir.phase<steady>} : (tensor<4x4xf32>) -> tensor<2x4xf32>
  %1 = mir.exp %0 {lir.slot = #lir.slot<offset = 64, size = 32>, lir.phase = #lir.phase<steady>} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  func.return %1 : tensor<2x4xf32>
}

// -----

// expected-error@+1 {{'lir.plan' result #0 of @result_attributes declares lir.slot = #lir.slot<offset = 0, size = 64>, but it returns %0, placed at #lir.slot<offset = 64, size = 64>}}
func.func @result_attributes(%x: tensor<16xf32> {lir.slot = #lir.slot<offset = 0, size = 64>}) -> (tensor<16xf32> {lir.slot = #lir.slot<offset = 0, size = 64>}) {
  lir.plan arena_bytes = 128 naive_bytes = 128 lower_bound_bytes = 128 alignment = 64
  %0 = mir.exp %x {lir.slot = #lir.slot<offset = 64, size = 64>, lir.phase = #lir.phase<steady>} : (tensor<16xf32>) -> tensor<16xf32>
  func.return %0 : tensor<16xf32>
}

// -----

// Two buffers live at the same step share bytes: the error names both.
func.func @overlap(%x: tensor<16xf32> {lir.slot = #lir.slot<offset = 0, size = 64>}) -> (tensor<16xf32> {lir.slot = #lir.slot<offset = 128, size = 64>}) {
  lir.plan arena_bytes = 192 naive_bytes = 192 lower_bound_bytes = 192 alignment = 64
  %0 = mir.exp %x {lir.slot = #lir.slot<offset = 64, size = 64>, lir.phase = #lir.phase<steady>} : (tensor<16xf32>) -> tensor<16xf32>
  // expected-error@+1 {{'lir.plan' %1 [64, 128) overlaps %0 [64, 128) while both are live at step 2 (%0 is live over steps 1..3)}}
  %1 = mir.neg %x {lir.slot = #lir.slot<offset = 64, size = 64>, lir.phase = #lir.phase<steady>} : (tensor<16xf32>) -> tensor<16xf32>
  %2 = mir.add %0, %1 {lir.slot = #lir.slot<offset = 128, size = 64>, lir.phase = #lir.phase<steady>} : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  func.return %2 : tensor<16xf32>
}

// -----

// A result that reuses a dying operand's slot without saying in_place.
func.func @unmarked_reuse(%x: tensor<16xf32> {lir.slot = #lir.slot<offset = 0, size = 64>}) -> (tensor<16xf32> {lir.slot = #lir.slot<offset = 64, size = 64>}) {
  lir.plan arena_bytes = 128 naive_bytes = 192 lower_bound_bytes = 128 alignment = 64
  %0 = mir.exp %x {lir.slot = #lir.slot<offset = 64, size = 64>, lir.phase = #lir.phase<steady>} : (tensor<16xf32>) -> tensor<16xf32>
  // expected-error@+1 {{'lir.plan' %1 [64, 128) overlaps %0 [64, 128) while both are live at step 2 (%0 is live over steps 1..2)}}
  %1 = mir.neg %0 {lir.slot = #lir.slot<offset = 64, size = 64>, lir.phase = #lir.phase<steady>} : (tensor<16xf32>) -> tensor<16xf32>
  func.return %1 : tensor<16xf32>
}

// -----

// A matmul cannot write its result over an operand, dying or not.
func.func @in_place_not_elementwise(%x: tensor<4x4xf32> {lir.slot = #lir.slot<offset = 0, size = 64>}) -> (tensor<4x4xf32> {lir.slot = #lir.slot<offset = 64, size = 64, in_place>}) {
  lir.plan arena_bytes = 128 naive_bytes = 192 lower_bound_bytes = 192 alignment = 64
  %0 = mir.exp %x {lir.slot = #lir.slot<offset = 64, size = 64>, lir.phase = #lir.phase<steady>} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  // expected-error@+1 {{'lir.plan' %1 [64, 128) overlaps %0 [64, 128) while both are live at step 2: 'mir.matmul' cannot write its result in place}}
  %1 = mir.matmul %0, %0 {lir.slot = #lir.slot<offset = 64, size = 64, in_place>, lir.phase = #lir.phase<steady>} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  func.return %1 : tensor<4x4xf32>
}

// -----

func.func @in_place_over_a_live_value(%x: tensor<16xf32> {lir.slot = #lir.slot<offset = 0, size = 64>}) -> (tensor<16xf32> {lir.slot = #lir.slot<offset = 128, size = 64>}) {
  lir.plan arena_bytes = 192 naive_bytes = 256 lower_bound_bytes = 192 alignment = 64
  %0 = mir.exp %x {lir.slot = #lir.slot<offset = 64, size = 64>, lir.phase = #lir.phase<steady>} : (tensor<16xf32>) -> tensor<16xf32>
  // expected-error@+1 {{'lir.plan' %1 [64, 128) overlaps %0 [64, 128) while both are live at step 2: %0 is still read after step 2 (it lives over steps 1..3)}}
  %1 = mir.neg %0 {lir.slot = #lir.slot<offset = 64, size = 64, in_place>, lir.phase = #lir.phase<steady>} : (tensor<16xf32>) -> tensor<16xf32>
  %2 = mir.add %0, %1 {lir.slot = #lir.slot<offset = 128, size = 64>, lir.phase = #lir.phase<steady>} : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  func.return %2 : tensor<16xf32>
}

// -----

// Inputs live throughout: their slot is never reused, not even in place.
func.func @in_place_over_an_input(%x: tensor<16xf32> {lir.slot = #lir.slot<offset = 0, size = 64>}) -> (tensor<16xf32> {lir.slot = #lir.slot<offset = 0, size = 64, in_place>}) {
  lir.plan arena_bytes = 64 naive_bytes = 128 lower_bound_bytes = 128 alignment = 64
  // expected-error@+1 {{'lir.plan' %0 [0, 64) overlaps %x [0, 64) while both are live at step 1: %x is an input, which lives throughout and is never overwritten}}
  %0 = mir.exp %x {lir.slot = #lir.slot<offset = 0, size = 64, in_place>, lir.phase = #lir.phase<steady>} : (tensor<16xf32>) -> tensor<16xf32>
  func.return %0 : tensor<16xf32>
}

// -----

// Through a view at an offset, the operand is only part of the dying buffer.
func.func @in_place_over_part_of_a_buffer(%x: tensor<4x4xf32> {lir.slot = #lir.slot<offset = 0, size = 64>}) -> (tensor<2x4xf32> {lir.slot = #lir.slot<offset = 64, size = 32, in_place>}) {
  lir.plan arena_bytes = 128 naive_bytes = 192 lower_bound_bytes = 192 alignment = 64
  %0 = mir.exp %x {lir.slot = #lir.slot<offset = 64, size = 64>, lir.phase = #lir.phase<steady>} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %1 = mir.narrow %0 axis = 0 start = 2 len = 2 {lir.slot = #lir.view<offset = 96, size = 32, byte_offset = 32>, lir.phase = #lir.phase<steady>} : (tensor<4x4xf32>) -> tensor<2x4xf32>
  // expected-error@+1 {{'lir.plan' %2 [64, 96) overlaps %0 [64, 128) while both are live at step 3: %0 is not an operand 'mir.neg' may overwrite (a whole buffer of the result's shape and element size, read only elementwise)}}
  %2 = mir.neg %1 {lir.slot = #lir.slot<offset = 64, size = 32, in_place>, lir.phase = #lir.phase<steady>} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  func.return %2 : tensor<2x4xf32>
}

// -----

func.func @in_place_in_another_slot(%x: tensor<16xf32> {lir.slot = #lir.slot<offset = 0, size = 64>}) -> (tensor<16xf32> {lir.slot = #lir.slot<offset = 128, size = 64, in_place>}) {
  lir.plan arena_bytes = 192 naive_bytes = 192 lower_bound_bytes = 128 alignment = 64
  %0 = mir.exp %x {lir.slot = #lir.slot<offset = 64, size = 64>, lir.phase = #lir.phase<steady>} : (tensor<16xf32>) -> tensor<16xf32>
  // expected-error@+1 {{'lir.plan' %1 is marked in_place, but its slot is no operand's slot}}
  %1 = mir.neg %0 {lir.slot = #lir.slot<offset = 128, size = 64, in_place>, lir.phase = #lir.phase<steady>} : (tensor<16xf32>) -> tensor<16xf32>
  func.return %1 : tensor<16xf32>
}

// -----

// Written in place, but shifted: the result must take the operand's slot exactly.
func.func @in_place_shifted(%x: tensor<16xf32> {lir.slot = #lir.slot<offset = 0, size = 64>}) -> (tensor<16xf32> {lir.slot = #lir.slot<offset = 80, size = 64, in_place>}) {
  lir.plan arena_bytes = 144 naive_bytes = 192 lower_bound_bytes = 128 alignment = 16
  %0 = mir.exp %x {lir.slot = #lir.slot<offset = 64, size = 64>, lir.phase = #lir.phase<steady>} : (tensor<16xf32>) -> tensor<16xf32>
  // expected-error@+1 {{'lir.plan' %1 [80, 144) overlaps %0 [64, 128) while both are live at step 2: an in-place result must take exactly the slot of the operand it overwrites}}
  %1 = mir.neg %0 {lir.slot = #lir.slot<offset = 80, size = 64, in_place>, lir.phase = #lir.phase<steady>} : (tensor<16xf32>) -> tensor<16xf32>
  func.return %1 : tensor<16xf32>
}

// -----

// expected-error@+2 {{'lir.plan' arena_bytes = 100 is not a multiple of the alignment 64}}
func.func @arena_not_aligned(%x: tensor<16xf32> {lir.slot = #lir.slot<offset = 0, size = 64>}) -> (tensor<1xf32> {lir.slot = #lir.slot<offset = 64, size = 4>}) {
  lir.plan arena_bytes = 100 naive_bytes = 128 lower_bound_bytes = 128 alignment = 64
  %0 = mir.narrow %x axis = 0 start = 0 len = 1 {lir.slot = #lir.slot<offset = 64, size = 4>, lir.phase = #lir.phase<steady>} : (tensor<16xf32>) -> tensor<1xf32>
  func.return %0 : tensor<1xf32>
}

// -----

// expected-error@+2 {{'lir.plan' naive_bytes = 64, but the function's buffers give 128}}
func.func @naive_bytes(%x: tensor<16xf32> {lir.slot = #lir.slot<offset = 0, size = 64>}) -> (tensor<16xf32> {lir.slot = #lir.slot<offset = 64, size = 64>}) {
  lir.plan arena_bytes = 128 naive_bytes = 64 lower_bound_bytes = 128 alignment = 64
  %0 = mir.exp %x {lir.slot = #lir.slot<offset = 64, size = 64>, lir.phase = #lir.phase<steady>} : (tensor<16xf32>) -> tensor<16xf32>
  func.return %0 : tensor<16xf32>
}

// -----

// expected-error@+2 {{'lir.plan' lower_bound_bytes = 64, but the function's buffers give 128}}
func.func @lower_bound_bytes(%x: tensor<16xf32> {lir.slot = #lir.slot<offset = 0, size = 64>}) -> (tensor<16xf32> {lir.slot = #lir.slot<offset = 64, size = 64>}) {
  lir.plan arena_bytes = 128 naive_bytes = 128 lower_bound_bytes = 64 alignment = 64
  %0 = mir.exp %x {lir.slot = #lir.slot<offset = 64, size = 64>, lir.phase = #lir.phase<steady>} : (tensor<16xf32>) -> tensor<16xf32>
  func.return %0 : tensor<16xf32>
}

// -----

// expected-error@+1 {{'func.func' argument #0 has dynamic type tensor<?xf32>: memory planning needs static shapes; bind them first with rlx-specialize{shapes=NAME=DIMS,...}}}
func.func @dynamic(%x: tensor<?xf32> {lir.slot = #lir.external}) -> (tensor<?xf32> {lir.slot = #lir.external}) {
  lir.plan arena_bytes = 0 naive_bytes = 0 lower_bound_bytes = 0 alignment = 64
  func.return %x : tensor<?xf32>
}

// -----

func.func @not_a_tensor(%x: tensor<16xf32> {lir.slot = #lir.slot<offset = 0, size = 64>}) -> (tensor<16xf32> {lir.slot = #lir.slot<offset = 0, size = 64>}) {
  lir.plan arena_bytes = 64 naive_bytes = 64 lower_bound_bytes = 64 alignment = 64
  // expected-error@+1 {{'arith.constant' result has type i32: memory plans hold tensors only}}
  %c = arith.constant 1 : i32
  func.return %x : tensor<16xf32>
}
