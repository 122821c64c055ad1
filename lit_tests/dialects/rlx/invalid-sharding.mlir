// RUN: rlx-opt %s --split-input-file --verify-diagnostics
// Every mistake in a mesh or a sharding is an error at the module or the function.

builtin.module attributes {rlx.mesh = {data = 2}} {
  // expected-error@+1 {{'rlx.sharding' of argument #0 ('x') of @f names axis 'model', which is not in the mesh (axes: 'data')}}
  func.func @f(%x: tensor<4x6xf32> {rlx.name = "x", rlx.sharding = ["data", "model"]}) -> tensor<4x6xf32> {
    func.return %x : tensor<4x6xf32>
  }
}

// -----

builtin.module attributes {rlx.mesh = {data = 2}} {
  // expected-error@+1 {{'rlx.sharding' of argument #0 ('arg0') of @f has 1 entries, but its type tensor<4x6xf32> has rank 2}}
  func.func @f(%x: tensor<4x6xf32> {rlx.sharding = ["data"]}) -> tensor<4x6xf32> {
    func.return %x : tensor<4x6xf32>
  }
}

// -----

builtin.module attributes {rlx.mesh = {data = 4}} {
  // expected-error@+1 {{argument #0 ('arg0') of @f splits dimension 1 of size 6 over 'data' (4 devices), which does not divide it}}
  func.func @f(%x: tensor<4x6xf32> {rlx.sharding = [unit, "data"]}) -> tensor<4x6xf32> {
    func.return %x : tensor<4x6xf32>
  }
}

// -----

builtin.module attributes {rlx.mesh = {data = 2, model = 3}} {
  // expected-error@+1 {{argument #0 ('arg0') of @f splits dimension 0 of size 4 over 'data' x 'model' (6 devices), which does not divide it}}
  func.func @f(%x: tensor<4x6xf32> {rlx.sharding = [["data", "model"], unit]}) -> tensor<4x6xf32> {
    func.return %x : tensor<4x6xf32>
  }
}

// -----

builtin.module attributes {rlx.mesh = {data = 2}} {
  // expected-error@+1 {{'rlx.sharding' of argument #0 ('arg0') of @f uses mesh axis 'data' more than once}}
  func.func @f(%x: tensor<4x6xf32> {rlx.sharding = ["data", "data"]}) -> tensor<4x6xf32> {
    func.return %x : tensor<4x6xf32>
  }
}

// -----

builtin.module {
  // expected-error@+1 {{argument #0 ('arg0') of @f has 'rlx.sharding' but the module has no 'rlx.mesh'}}
  func.func @f(%x: tensor<4x6xf32> {rlx.sharding = ["data", unit]}) -> tensor<4x6xf32> {
    func.return %x : tensor<4x6xf32>
  }
}

// -----

// expected-error@+1 {{'rlx.mesh' axis 'data' must have a positive integer size, got 0 : i64}}
builtin.module attributes {rlx.mesh = {data = 0}} {
  func.func @f(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
    func.return %x : tensor<4x6xf32>
  }
}

// -----

// expected-error@+1 {{'rlx.mesh' must be a non-empty dictionary of axis sizes ({data = 2, model = 2}), got [2 : i64]}}
builtin.module attributes {rlx.mesh = [2]} {
  func.func @f(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
    func.return %x : tensor<4x6xf32>
  }
}

// -----

builtin.module attributes {rlx.mesh = {data = 2}} {
  // expected-error@+1 {{'rlx.sharding' of argument #0 ('arg0') of @f: an entry must be an axis name, unit or a list of axis names, got 3 : i64}}
  func.func @f(%x: tensor<4x6xf32> {rlx.sharding = ["data", 3]}) -> tensor<4x6xf32> {
    func.return %x : tensor<4x6xf32>
  }
}

// -----

builtin.module attributes {rlx.mesh = {data = 2}} {
  // expected-error@+1 {{'rlx.sharding' of argument #0 ('arg0') of @f must be a list with one entry per dimension, got "data"}}
  func.func @f(%x: tensor<4x6xf32> {rlx.sharding = "data"}) -> tensor<4x6xf32> {
    func.return %x : tensor<4x6xf32>
  }
}

// -----

// A result's sharding (rlx-train-step's updated parameters and state) is checked alike.
builtin.module attributes {rlx.mesh = {data = 4}} {
  // expected-error@+1 {{result #1 of @f splits dimension 0 of size 6 over 'data' (4 devices), which does not divide it}}
  func.func @f(%x: tensor<4x6xf32>) -> (tensor<4x6xf32>, tensor<6xf32> {rlx.sharding = ["data"]}) {
    %y = mir.reduce sum %x axes = [0] : (tensor<4x6xf32>) -> tensor<6xf32>
    func.return %x, %y : tensor<4x6xf32>, tensor<6xf32>
  }
}

// -----

// expected-error@+1 {{result #0 of @f has 'rlx.sharding' but the module has no 'rlx.mesh'}}
func.func @f(%x: tensor<4xf32>) -> (tensor<4xf32> {rlx.sharding = [unit]}) {
  func.return %x : tensor<4xf32>
}
