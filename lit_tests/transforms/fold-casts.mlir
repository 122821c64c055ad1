// rlx-fold-casts: identity casts, exact chains and duplicates go; nothing that rounds does.
// RUN: rlx-opt %s --split-input-file -p rlx-fold-casts | filecheck %s

// An identity cast is its operand.
// CHECK-LABEL: func.func @identity(%x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    func.return %x : tensor<4xf32>
func.func @identity(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = mir.cast %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// -----

// Widen then narrow back is the input; narrow then widen rounds and stays.
// CHECK-LABEL: func.func @chains(%h: tensor<4xf16>, %x: tensor<4xf32>) -> (tensor<4xf16>, tensor<4xf32>) {
// CHECK-NEXT:    %narrow = mir.cast %x : (tensor<4xf32>) -> tensor<4xf16>
// CHECK-NEXT:    %rounded = mir.cast %narrow : (tensor<4xf16>) -> tensor<4xf32>
// CHECK-NEXT:    func.return %h, %rounded : tensor<4xf16>, tensor<4xf32>
func.func @chains(%h: tensor<4xf16>, %x: tensor<4xf32>) -> (tensor<4xf16>, tensor<4xf32>) {
  %wide = mir.cast %h : (tensor<4xf16>) -> tensor<4xf32>
  %back = mir.cast %wide : (tensor<4xf32>) -> tensor<4xf16>
  %narrow = mir.cast %x : (tensor<4xf32>) -> tensor<4xf16>
  %rounded = mir.cast %narrow : (tensor<4xf16>) -> tensor<4xf32>
  func.return %back, %rounded : tensor<4xf16>, tensor<4xf32>
}

// -----

// After an exact step a chain to a float starts from the input; to an integer it
// keeps its path (a NaN or infinity converts to an unspecified integer).
// CHECK-LABEL: func.func @shorten(%h: tensor<4xf16>) -> (tensor<4xbf16>, tensor<4xi32>) {
// CHECK-NEXT:    %wide = mir.cast %h : (tensor<4xf16>) -> tensor<4xf64>
// CHECK-NEXT:    %b = mir.cast %h : (tensor<4xf16>) -> tensor<4xbf16>
// CHECK-NEXT:    %i = mir.cast %wide : (tensor<4xf64>) -> tensor<4xi32>
// CHECK-NEXT:    func.return %b, %i : tensor<4xbf16>, tensor<4xi32>
func.func @shorten(%h: tensor<4xf16>) -> (tensor<4xbf16>, tensor<4xi32>) {
  %wide = mir.cast %h : (tensor<4xf16>) -> tensor<4xf64>
  %b = mir.cast %wide : (tensor<4xf64>) -> tensor<4xbf16>
  %i = mir.cast %wide : (tensor<4xf64>) -> tensor<4xi32>
  func.return %b, %i : tensor<4xbf16>, tensor<4xi32>
}

// -----

// Two casts of one value to one type are one cast, right after the value's definition.
// CHECK-LABEL: func.func @duplicates(%x: tensor<4xf32>) -> (tensor<4xf16>, tensor<4xf16>) {
// CHECK-NEXT:    %e = mir.exp %x : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %a = mir.cast %e : (tensor<4xf32>) -> tensor<4xf16>
// CHECK-NEXT:    %n = mir.neg %e : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    func.return %a, %a : tensor<4xf16>, tensor<4xf16>
func.func @duplicates(%x: tensor<4xf32>) -> (tensor<4xf16>, tensor<4xf16>) {
  %e = mir.exp %x : (tensor<4xf32>) -> tensor<4xf32>
  %n = mir.neg %e : (tensor<4xf32>) -> tensor<4xf32>
  %a = mir.cast %e : (tensor<4xf32>) -> tensor<4xf16>
  %b = mir.cast %e : (tensor<4xf32>) -> tensor<4xf16>
  func.return %a, %b : tensor<4xf16>, tensor<4xf16>
}

// -----

// Blocked-scaling casts rescale their input: even to the same type they stay, and so does
// an unused plain cast (rlx-dce's business, not this pass's).
// CHECK-LABEL: func.func @kept(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
// CHECK-NEXT:    %s = mir.cast %x config <sf_block = [2, 2], round_sf> : (tensor<4x4xf32>) -> tensor<4x4xf32>
// CHECK-NEXT:    %dead = mir.cast %x : (tensor<4x4xf32>) -> tensor<4x4xf16>
// CHECK-NEXT:    func.return %s : tensor<4x4xf32>
func.func @kept(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %s = mir.cast %x config <sf_block = [2, 2], round_sf> : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %dead = mir.cast %x : (tensor<4x4xf32>) -> tensor<4x4xf16>
  func.return %s : tensor<4x4xf32>
}

// -----

// A cast whose declared shape differs from its operand's keeps the program's types: the
// chain is neither shortened to %x (tensor<3x...>) nor started from it, and two casts
// declaring different shapes are not merged.
// CHECK-LABEL: func.func @declared_shapes(%x: tensor<3xf16>) -> (tensor<?xf16>, tensor<?xf64>, tensor<?xf32>, tensor<3xf32>) {
// CHECK-NEXT:    %a = mir.cast %x : (tensor<3xf16>) -> tensor<?xf32>
// CHECK-NEXT:    %back = mir.cast %a : (tensor<?xf32>) -> tensor<?xf16>
// CHECK-NEXT:    %wide = mir.cast %a : (tensor<?xf32>) -> tensor<?xf64>
// CHECK-NEXT:    %same = mir.cast %x : (tensor<3xf16>) -> tensor<3xf32>
// CHECK-NEXT:    func.return %back, %wide, %a, %same : tensor<?xf16>, tensor<?xf64>, tensor<?xf32>, tensor<3xf32>
func.func @declared_shapes(%x: tensor<3xf16>) -> (tensor<?xf16>, tensor<?xf64>, tensor<?xf32>, tensor<3xf32>) {
  %a = mir.cast %x : (tensor<3xf16>) -> tensor<?xf32>
  %back = mir.cast %a : (tensor<?xf32>) -> tensor<?xf16>
  %wide = mir.cast %a : (tensor<?xf32>) -> tensor<?xf64>
  %same = mir.cast %x : (tensor<3xf16>) -> tensor<3xf32>
  func.return %back, %wide, %a, %same : tensor<?xf16>, tensor<?xf64>, tensor<?xf32>, tensor<3xf32>
}
