// RUN: rlx-opt %s --split-input-file -p rlx-convert-mir-to-linalg --verify-roundtrip | filecheck %s

// gather reads the table with tensor.extract at each result position's id: the
// table's size added where negative (it counts from the end), then clamped.
// CHECK-LABEL: func.func @gather
// CHECK:         [[SIZE:%.*]] = arith.constant 5 : index
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%i : tensor<3xi32>)
// CHECK:           [[ID:%.*]] = arith.index_cast {{%.*}} : i64 to index
// CHECK:           [[NEG:%.*]] = arith.cmpi slt, [[ID]], {{%.*}} : index
// CHECK:           [[WRAPPED:%.*]] = arith.addi [[ID]], [[SIZE]] : index
// CHECK:           [[ROW:%.*]] = arith.select [[NEG]], [[WRAPPED]], [[ID]] : index
// CHECK:           arith.minsi [[ROW]]
// CHECK:           [[COL:%.*]] = linalg.index 1 : index
// CHECK:           tensor.extract %t[{{%.*}}, [[COL]]] : tensor<5x4xf32>
func.func @gather(%t: tensor<5x4xf32>, %i: tensor<3xi32>) -> tensor<3x4xf32> {
  %0 = mir.gather %t, %i axis = 0 : (tensor<5x4xf32>, tensor<3xi32>) -> tensor<3x4xf32>
  func.return %0 : tensor<3x4xf32>
}

// -----

// scatter_add: a reduction over the update rows (last loop), each adding where its id
// (dim_size added where negative) is the output row.
// CHECK-LABEL: func.func @scatter_add
// CHECK:         [[SIZE:%.*]] = arith.constant 5 : index
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%i, %u : tensor<4xi64>, tensor<4x3xf32>)
// CHECK:           [[ID:%.*]] = arith.index_cast {{%.*}} : i64 to index
// CHECK:           [[NEG:%.*]] = arith.cmpi slt, [[ID]], {{%.*}} : index
// CHECK:           [[WRAPPED:%.*]] = arith.addi [[ID]], [[SIZE]] : index
// CHECK:           [[SELECTED:%.*]] = arith.select [[NEG]], [[WRAPPED]], [[ID]] : index
// CHECK:           [[ROW:%.*]] = linalg.index 0 : index
// CHECK:           arith.cmpi eq, [[SELECTED]], [[ROW]] : index
// CHECK:           arith.select
// CHECK:           arith.addf
func.func @scatter_add(%u: tensor<4x3xf32>, %i: tensor<4xi64>) -> tensor<5x3xf32> {
  %0 = mir.scatter_add %u, %i dim_size = 5 : (tensor<4x3xf32>, tensor<4xi64>) -> tensor<5x3xf32>
  func.return %0 : tensor<5x3xf32>
}

// -----

// dynamic_update_slice is tensor.insert_slice at each start clamped into [0, size - length];
// a dim the update fills has offset 0.
// CHECK-LABEL: func.func @dynamic_update_slice
// CHECK:         [[POS:%.*]] = arith.index_cast {{%.*}} : i64 to index
// CHECK:         [[ROOM:%.*]] = arith.constant 7 : index
// CHECK:         [[LOW:%.*]] = arith.minsi [[POS]], [[ROOM]] : index
// CHECK:         [[AT:%.*]] = arith.maxsi [[LOW]], {{%.*}} : index
// CHECK:         tensor.insert_slice %new into %cache[0, 0, [[AT]], 0] [1, 2, 1, 4] [1, 1, 1, 1] : tensor<1x2x1x4xbf16> into tensor<1x2x8x4xbf16>
func.func @dynamic_update_slice(%cache: tensor<1x2x8x4xbf16>, %new: tensor<1x2x1x4xbf16>, %pos: tensor<i32>, %z: tensor<i64>) -> tensor<1x2x8x4xbf16> {
  %0 = mir.dynamic_update_slice %cache, %new at [%z, %z, %pos, %z] : (tensor<1x2x8x4xbf16>, tensor<1x2x1x4xbf16>, tensor<i64>, tensor<i64>, tensor<i32>, tensor<i64>) -> tensor<1x2x8x4xbf16>
  func.return %0 : tensor<1x2x8x4xbf16>
}
