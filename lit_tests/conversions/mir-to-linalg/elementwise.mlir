// RUN: rlx-opt %s --split-input-file -p rlx-convert-mir-to-linalg --verify-roundtrip | filecheck %s
// RUN: rlx-opt %s --split-input-file -p rlx-convert-mir-to-linalg --print-op-generic | rlx-opt --split-input-file | filecheck %s
// (Every lowered text also reads back, in both forms, in tests/conversions/mir_to_linalg/test_lowering.py.)

// A broadcasting binary op is one linalg.generic; the size-1 dim reads index 0.
// CHECK-LABEL: func.func @add(%x: tensor<2x3xf32>, %y: tensor<2x1xf32>) -> tensor<2x3xf32> {
// CHECK-NEXT:    [[E:%.*]] = tensor.empty() : tensor<2x3xf32>
// CHECK-NEXT:    [[R:%.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %y : tensor<2x3xf32>, tensor<2x1xf32>) outs([[E]] : tensor<2x3xf32>) {
// CHECK-NEXT:    ^bb0([[A:%.*]]: f32, [[B:%.*]]: f32, {{%.*}}: f32):
// CHECK-NEXT:      [[S:%.*]] = arith.addf [[A]], [[B]] : f32
// CHECK-NEXT:      linalg.yield [[S]] : f32
// CHECK-NEXT:    } -> tensor<2x3xf32>
// CHECK-NEXT:    func.return [[R]] : tensor<2x3xf32>
func.func @add(%x: tensor<2x3xf32>, %y: tensor<2x1xf32>) -> tensor<2x3xf32> {
  %0 = mir.add %x, %y : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

// Mixed dtypes are promoted inside the body (RLX promotion: i32 * f32 is f64).
// CHECK-LABEL: func.func @promote
// CHECK:         ^bb0([[A:%.*]]: i32, [[B:%.*]]: f32, {{%.*}}: f64):
// CHECK-NEXT:      [[AF:%.*]] = arith.sitofp [[A]] : i32 to f64
// CHECK-NEXT:      [[BF:%.*]] = arith.extf [[B]] : f32 to f64
// CHECK-NEXT:      [[M:%.*]] = arith.mulf [[AF]], [[BF]] : f64
// CHECK-NEXT:      linalg.yield [[M]] : f64
func.func @promote(%a: tensor<3xi32>, %b: tensor<3xf32>) -> tensor<3xf64> {
  %0 = mir.mul %a, %b : (tensor<3xi32>, tensor<3xf32>) -> tensor<3xf64>
  func.return %0 : tensor<3xf64>
}

// -----

// Unsigned values live in signless storage; the ops reading them are the unsigned ones.
// CHECK-LABEL: func.func @unsigned(%a: tensor<4xi8>, %b: tensor<4xi8>) -> (tensor<4xi8>, tensor<4xi1>) {
// CHECK:         arith.divui
// CHECK:         arith.cmpi ult
func.func @unsigned(%a: tensor<4xui8>, %b: tensor<4xui8>) -> (tensor<4xui8>, tensor<4xi1>) {
  %0 = mir.div %a, %b : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  %1 = mir.compare lt, %a, %b : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xi1>
  func.return %0, %1 : tensor<4xui8>, tensor<4xi1>
}

// -----

// Activations expand to arith/math in the body: silu(x) = x / (1 + exp(-x)) * ...; gelu is
// x erfc(-x/√2) / 2 in f64 (Cody's erfc: exp(-t²) exp(-(y-t)(y+t)), t = floor(16 y) / 16), rounded once.
// CHECK-LABEL: func.func @activations
// CHECK:         arith.negf
// CHECK-NEXT:    math.exp
// CHECK:         arith.extf %{{.*}} : f32 to f64
// CHECK:         math.floor %{{.*}} : f64
// CHECK:         math.exp %{{.*}} : f64
// CHECK:         arith.truncf %{{.*}} : f64 to f32
// CHECK:         math.rsqrt
// CHECK:         math.round
func.func @activations(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %0 = mir.silu %x : (tensor<4xf32>) -> tensor<4xf32>
  %1 = mir.gelu %x : (tensor<4xf32>) -> tensor<4xf32>
  %2 = mir.rsqrt %x : (tensor<4xf32>) -> tensor<4xf32>
  %3 = mir.round %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0, %1, %2, %3 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// log1p and expm1 keep their precise math ops (not log(1 + x) and exp(x) - 1).
// CHECK-LABEL: func.func @log1p_expm1
// CHECK:         math.log1p %{{.*}} : f32
// CHECK-NOT:     math.log {{.*}}
// CHECK:         math.expm1 %{{.*}} : f32
// CHECK-NOT:     math.exp {{.*}}
// CHECK:         func.return
func.func @log1p_expm1(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = mir.log1p %x : (tensor<4xf32>) -> tensor<4xf32>
  %1 = mir.expm1 %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// erf is Cody's rational approximation in f64 (IREE has no f64 math.erf), rounded once.
// CHECK-LABEL: func.func @erf
// CHECK:         arith.extf %{{.*}} : f32 to f64
// CHECK-NOT:     math.erf
// CHECK:         arith.truncf %{{.*}} : f64 to f32
// CHECK:         func.return
func.func @erf(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = mir.erf %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

// Casts: float to int truncates (fptosi), anything to i1 is `!= 0`; constants become arith.constant.
// CHECK-LABEL: func.func @casts
// CHECK:         arith.constant dense<[1.500000e+00, -2.000000e+00]> : tensor<2xf32>
// CHECK:         arith.fptosi {{%.*}} : f32 to i32
// CHECK:         [[Z:%.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    arith.cmpf une, {{%.*}}, [[Z]] : f32
func.func @casts(%x: tensor<2xf32>) -> (tensor<2xi32>, tensor<2xi1>) {
  %c = mir.constant dense<[1.5, -2.0]> : tensor<2xf32>
  %s = mir.add %x, %c : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %0 = mir.cast %s : (tensor<2xf32>) -> tensor<2xi32>
  %1 = mir.cast %s : (tensor<2xf32>) -> tensor<2xi1>
  func.return %0, %1 : tensor<2xi32>, tensor<2xi1>
}

// -----

// Dynamic dims are read with tensor.dim and sized into tensor.empty.
// CHECK-LABEL: func.func @dynamic(%x: tensor<?x4xf32>, %b: tensor<4xf32>) -> tensor<?x4xf32> {
// CHECK-NEXT:    [[C0:%.*]] = arith.constant 0 : index
// CHECK-NEXT:    [[D:%.*]] = tensor.dim %x, [[C0]] : tensor<?x4xf32>
// CHECK-NEXT:    {{%.*}} = tensor.empty([[D]]) : tensor<?x4xf32>
func.func @dynamic(%x: tensor<?x4xf32>, %b: tensor<4xf32>) -> tensor<?x4xf32> {
  %0 = mir.sub %x, %b : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  func.return %0 : tensor<?x4xf32>
}
