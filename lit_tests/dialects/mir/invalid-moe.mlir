// RUN: rlx-opt %s --split-input-file --verify-diagnostics

func.func @lora_rank_mismatch(%x: tensor<3x4xf32>, %w: tensor<4x5xf32>, %a: tensor<4x2xf32>, %b: tensor<3x5xf32>) -> tensor<3x5xf32> {
  // expected-error@+1 {{'mir.lora_matmul' contraction dims 2 and 3 differ}}
  %0 = mir.lora_matmul %x, %w, %a, %b scale = 1.000000e+00 : (tensor<3x4xf32>, tensor<4x5xf32>, tensor<4x2xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  func.return %0 : tensor<3x5xf32>
}

// -----

func.func @lora_k_mismatch(%x: tensor<3x4xf32>, %w: tensor<5x5xf32>, %a: tensor<4x2xf32>, %b: tensor<2x5xf32>) -> tensor<3x5xf32> {
  // expected-error@+1 {{'mir.lora_matmul' contraction dims 4 and 5 differ}}
  %0 = mir.lora_matmul %x, %w, %a, %b scale = 1.000000e+00 : (tensor<3x4xf32>, tensor<5x5xf32>, tensor<4x2xf32>, tensor<2x5xf32>) -> tensor<3x5xf32>
  func.return %0 : tensor<3x5xf32>
}

// -----

func.func @lora_out_mismatch(%x: tensor<3x4xf32>, %w: tensor<4x5xf32>, %a: tensor<4x2xf32>, %b: tensor<2x6xf32>) -> tensor<3x5xf32> {
  // expected-error@+1 {{'mir.lora_matmul' the adapter product (x @ a) @ b has shape [3, 6] but x @ w has [3, 5]}}
  %0 = mir.lora_matmul %x, %w, %a, %b scale = 1.000000e+00 : (tensor<3x4xf32>, tensor<4x5xf32>, tensor<4x2xf32>, tensor<2x6xf32>) -> tensor<3x5xf32>
  func.return %0 : tensor<3x5xf32>
}

// -----

func.func @lora_dtype(%x: tensor<3x4xf32>, %w: tensor<4x5xf32>, %a: tensor<4x2xbf16>, %b: tensor<2x5xf32>) -> tensor<3x5xf32> {
  // expected-error@+1 {{'mir.lora_matmul' a element type bf16 differs from x's f32}}
  %0 = mir.lora_matmul %x, %w, %a, %b scale = 1.000000e+00 : (tensor<3x4xf32>, tensor<4x5xf32>, tensor<4x2xbf16>, tensor<2x5xf32>) -> tensor<3x5xf32>
  func.return %0 : tensor<3x5xf32>
}

// -----

func.func @lora_integer(%x: tensor<3x4xi32>, %w: tensor<4x5xi32>, %a: tensor<4x2xi32>, %b: tensor<2x5xi32>) -> tensor<3x5xi32> {
  // expected-error@+1 {{'mir.lora_matmul' x must be floating point, got i32}}
  %0 = mir.lora_matmul %x, %w, %a, %b scale = 1.000000e+00 : (tensor<3x4xi32>, tensor<4x5xi32>, tensor<4x2xi32>, tensor<2x5xi32>) -> tensor<3x5xi32>
  func.return %0 : tensor<3x5xi32>
}

// -----

func.func @grouped_k_mismatch(%x: tensor<6x4xf32>, %w: tensor<3x5x2xf32>, %e: tensor<6xi64>) -> tensor<6x2xf32> {
  // expected-error@+1 {{'mir.grouped_matmul' contraction dims 4 and 5 differ}}
  %0 = mir.grouped_matmul %x, %w, %e : (tensor<6x4xf32>, tensor<3x5x2xf32>, tensor<6xi64>) -> tensor<6x2xf32>
  func.return %0 : tensor<6x2xf32>
}

// -----

func.func @grouped_row_count(%x: tensor<6x4xf32>, %w: tensor<3x4x2xf32>, %e: tensor<5xi64>) -> tensor<6x2xf32> {
  // expected-error@+1 {{'mir.grouped_matmul' x has 6 rows but expert has 5 ids}}
  %0 = mir.grouped_matmul %x, %w, %e : (tensor<6x4xf32>, tensor<3x4x2xf32>, tensor<5xi64>) -> tensor<6x2xf32>
  func.return %0 : tensor<6x2xf32>
}

// -----

func.func @grouped_w_rank(%x: tensor<6x4xf32>, %w: tensor<4x2xf32>, %e: tensor<6xi64>) -> tensor<6x2xf32> {
  // expected-error@+1 {{'mir.grouped_matmul' w must have rank 3, got [4, 2]}}
  %0 = mir.grouped_matmul %x, %w, %e : (tensor<6x4xf32>, tensor<4x2xf32>, tensor<6xi64>) -> tensor<6x2xf32>
  func.return %0 : tensor<6x2xf32>
}

// -----

func.func @grouped_expert_type(%x: tensor<6x4xf32>, %w: tensor<3x4x2xf32>, %e: tensor<6xi1>) -> tensor<6x2xf32> {
  // expected-error@+1 {{'mir.grouped_matmul' expert must have an integer or floating-point element type, got i1}}
  %0 = mir.grouped_matmul %x, %w, %e : (tensor<6x4xf32>, tensor<3x4x2xf32>, tensor<6xi1>) -> tensor<6x2xf32>
  func.return %0 : tensor<6x2xf32>
}

// -----

func.func @grouped_dtype(%x: tensor<6x4xf32>, %w: tensor<3x4x2xf16>, %e: tensor<6xi64>) -> tensor<6x2xf32> {
  // expected-error@+1 {{'mir.grouped_matmul' w element type f16 differs from x's f32}}
  %0 = mir.grouped_matmul %x, %w, %e : (tensor<6x4xf32>, tensor<3x4x2xf16>, tensor<6xi64>) -> tensor<6x2xf32>
  func.return %0 : tensor<6x2xf32>
}

// -----

func.func @dequant_grouped_gguf_row_bytes(%x: tensor<6x64xf32>, %q: tensor<3x5x34xui8>, %s: tensor<1xf32>, %z: tensor<1xf32>, %e: tensor<6xi64>) -> tensor<6x5xf32> {
  // expected-error@+1 {{'mir.dequant_grouped_matmul' w_q must have shape [3, 5, 68] (N rows of K = 64 values in 2 blocks of 34 bytes), got [3, 5, 34]}}
  %0 = mir.dequant_grouped_matmul %x, %q, %s, %z, %e scheme = gguf_q8_0 : (tensor<6x64xf32>, tensor<3x5x34xui8>, tensor<1xf32>, tensor<1xf32>, tensor<6xi64>) -> tensor<6x5xf32>
  func.return %0 : tensor<6x5xf32>
}

// -----

func.func @dequant_grouped_gguf_k(%x: tensor<6x48xf32>, %q: tensor<3x5x34xui8>, %s: tensor<1xf32>, %z: tensor<1xf32>, %e: tensor<6xi64>) -> tensor<6x5xf32> {
  // expected-error@+1 {{'mir.dequant_grouped_matmul' K = 48 is not a multiple of gguf_q8_0's block of 32 values}}
  %0 = mir.dequant_grouped_matmul %x, %q, %s, %z, %e scheme = gguf_q8_0 : (tensor<6x48xf32>, tensor<3x5x34xui8>, tensor<1xf32>, tensor<1xf32>, tensor<6xi64>) -> tensor<6x5xf32>
  func.return %0 : tensor<6x5xf32>
}

// -----

func.func @dequant_grouped_gguf_scale(%x: tensor<6x32xf32>, %q: tensor<3x5x34xui8>, %s: tensor<3x1x5xf32>, %z: tensor<1xf32>, %e: tensor<6xi64>) -> tensor<6x5xf32> {
  // expected-error@+1 {{'mir.dequant_grouped_matmul' scale must have shape [1] (unused by gguf_q8_0), got [3, 1, 5]}}
  %0 = mir.dequant_grouped_matmul %x, %q, %s, %z, %e scheme = gguf_q8_0 : (tensor<6x32xf32>, tensor<3x5x34xui8>, tensor<3x1x5xf32>, tensor<1xf32>, tensor<6xi64>) -> tensor<6x5xf32>
  func.return %0 : tensor<6x5xf32>
}

// -----

func.func @dequant_grouped_no_block(%x: tensor<6x8xf32>, %q: tensor<3x8x5xi8>, %s: tensor<3x2x5xf32>, %z: tensor<1xf32>, %e: tensor<6xi64>) -> tensor<6x5xf32> {
  // expected-error@+1 {{'mir.dequant_grouped_matmul' scheme int8_block requires a block_size}}
  %0 = mir.dequant_grouped_matmul %x, %q, %s, %z, %e scheme = int8_block : (tensor<6x8xf32>, tensor<3x8x5xi8>, tensor<3x2x5xf32>, tensor<1xf32>, tensor<6xi64>) -> tensor<6x5xf32>
  func.return %0 : tensor<6x5xf32>
}

// -----

func.func @dequant_grouped_scale_experts(%x: tensor<6x8xf32>, %q: tensor<3x8x5xi8>, %s: tensor<2x2x5xf32>, %z: tensor<1xf32>, %e: tensor<6xi64>) -> tensor<6x5xf32> {
  // expected-error@+1 {{'mir.dequant_grouped_matmul' scale must have shape [3, 2, 5] (one per block and column), got [2, 2, 5]}}
  %0 = mir.dequant_grouped_matmul %x, %q, %s, %z, %e scheme = int8_block block_size = 4 : (tensor<6x8xf32>, tensor<3x8x5xi8>, tensor<2x2x5xf32>, tensor<1xf32>, tensor<6xi64>) -> tensor<6x5xf32>
  func.return %0 : tensor<6x5xf32>
}

// -----

func.func @dequant_grouped_k_mismatch(%x: tensor<6x8xf32>, %q: tensor<3x4x5xi8>, %s: tensor<3x2x5xf32>, %z: tensor<1xf32>, %e: tensor<6xi64>) -> tensor<6x5xf32> {
  // expected-error@+1 {{'mir.dequant_grouped_matmul' w_q must have shape [3, 8, 5] (one code per weight), got [3, 4, 5]}}
  %0 = mir.dequant_grouped_matmul %x, %q, %s, %z, %e scheme = int8_block block_size = 4 : (tensor<6x8xf32>, tensor<3x4x5xi8>, tensor<3x2x5xf32>, tensor<1xf32>, tensor<6xi64>) -> tensor<6x5xf32>
  func.return %0 : tensor<6x5xf32>
}

// -----

func.func @dequant_grouped_rank_two_weights(%x: tensor<6x8xf32>, %q: tensor<8x5xi8>, %s: tensor<3x2x5xf32>, %z: tensor<1xf32>, %e: tensor<6xi64>) -> tensor<6x5xf32> {
  // expected-error@+1 {{'mir.dequant_grouped_matmul' w_q must have rank 3, got [8, 5]}}
  %0 = mir.dequant_grouped_matmul %x, %q, %s, %z, %e scheme = int8_block block_size = 4 : (tensor<6x8xf32>, tensor<8x5xi8>, tensor<3x2x5xf32>, tensor<1xf32>, tensor<6xi64>) -> tensor<6x5xf32>
  func.return %0 : tensor<6x5xf32>
}

// -----

func.func @dequant_grouped_rows_mismatch(%x: tensor<6x8xf32>, %q: tensor<3x8x5xi8>, %s: tensor<3x2x5xf32>, %z: tensor<1xf32>, %e: tensor<4xi64>) -> tensor<6x5xf32> {
  // expected-error@+1 {{'mir.dequant_grouped_matmul' x has 6 rows but expert has 4 ids}}
  %0 = mir.dequant_grouped_matmul %x, %q, %s, %z, %e scheme = int8_block block_size = 4 : (tensor<6x8xf32>, tensor<3x8x5xi8>, tensor<3x2x5xf32>, tensor<1xf32>, tensor<4xi64>) -> tensor<6x5xf32>
  func.return %0 : tensor<6x5xf32>
}

// -----

func.func @dequant_grouped_bool_ids(%x: tensor<6x8xf32>, %q: tensor<3x8x5xi8>, %s: tensor<3x2x5xf32>, %z: tensor<1xf32>, %e: tensor<6xi1>) -> tensor<6x5xf32> {
  // expected-error@+1 {{'mir.dequant_grouped_matmul' expert must have an integer or floating-point element type, got i1}}
  %0 = mir.dequant_grouped_matmul %x, %q, %s, %z, %e scheme = int8_block block_size = 4 : (tensor<6x8xf32>, tensor<3x8x5xi8>, tensor<3x2x5xf32>, tensor<1xf32>, tensor<6xi1>) -> tensor<6x5xf32>
  func.return %0 : tensor<6x5xf32>
}

// -----

func.func @dequant_moe_weights_rank_two(%q: tensor<8x5xi8>, %s: tensor<2x5xf32>, %z: tensor<1xf32>) -> tensor<1x8x5xf32> {
  // expected-error@+1 {{'mir.dequant_moe_weights' w_q must have rank 3 ([E, rows, N]), got [8, 5]}}
  %0 = mir.dequant_moe_weights %q, %s, %z scheme = int8_block block_size = 4 : (tensor<8x5xi8>, tensor<2x5xf32>, tensor<1xf32>) -> tensor<1x8x5xf32>
  func.return %0 : tensor<1x8x5xf32>
}

// -----

func.func @dequant_moe_weights_gguf(%q: tensor<2x5x20xui8>, %s: tensor<1xf32>, %z: tensor<1xf32>) -> tensor<2x32x5xf32> {
  // expected-error@+1 {{'mir.dequant_moe_weights' w_q rows of 20 bytes are not whole gguf_q4_0 blocks of 18 bytes}}
  %0 = mir.dequant_moe_weights %q, %s, %z scheme = gguf_q4_0 : (tensor<2x5x20xui8>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x32x5xf32>
  func.return %0 : tensor<2x32x5xf32>
}

// -----

func.func @dequant_moe_weights_gguf_signed(%q: tensor<2x5x18xi8>, %s: tensor<1xf32>, %z: tensor<1xf32>) -> tensor<2x32x5xf32> {
  // expected-error@+1 {{'mir.dequant_moe_weights' w_q must have element type ui8, got i8}}
  %0 = mir.dequant_moe_weights %q, %s, %z scheme = gguf_q4_0 : (tensor<2x5x18xi8>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x32x5xf32>
  func.return %0 : tensor<2x32x5xf32>
}

// -----

func.func @dequant_moe_weights_zp_experts(%q: tensor<2x8x5xi8>, %s: tensor<2x2x5xf32>, %z: tensor<3x2x5xf32>) -> tensor<2x8x5xf32> {
  // expected-error@+1 {{'mir.dequant_moe_weights' zp must have shape [2, 2, 5] (one per block and column), got [3, 2, 5]}}
  %0 = mir.dequant_moe_weights %q, %s, %z scheme = int8_block_asym block_size = 4 : (tensor<2x8x5xi8>, tensor<2x2x5xf32>, tensor<3x2x5xf32>) -> tensor<2x8x5xf32>
  func.return %0 : tensor<2x8x5xf32>
}
