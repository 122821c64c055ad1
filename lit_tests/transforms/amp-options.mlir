// rlx-amp's options: a bad value is an error naming the option and the values it
// takes (exit status 1); an unknown op in ops= is an error at the module.
// RUN: not rlx-opt %s -p 'rlx-amp{policy=f8}' 2>&1 | filecheck %s --check-prefix=POLICY
// RUN: not rlx-opt %s -p 'rlx-amp{policy=custom compute=i32}' 2>&1 | filecheck %s --check-prefix=CLASS
// RUN: not rlx-opt %s -p 'rlx-amp{policy=torch-cpu low=f32}' 2>&1 | filecheck %s --check-prefix=LOW
// RUN: not rlx-opt %s -p 'rlx-amp{policy=auto-mixed low=bf16}' 2>&1 | filecheck %s --check-prefix=NOLOW
// RUN: not rlx-opt %s -p 'rlx-amp{policy=torch-cuda reduction=f32}' 2>&1 | filecheck %s --check-prefix=PEROP
// RUN: not rlx-opt %s -p 'rlx-amp{ops=mir.softmax:f8}' 2>&1 | filecheck %s --check-prefix=OPVALUE
// RUN: not rlx-opt %s -p 'rlx-amp{ops=mir.softmx:f32}' 2>&1 | filecheck %s --check-prefix=OPNAME
// RUN: rlx-opt --list-passes | filecheck %s --check-prefix=LIST

// POLICY: rlx-opt: error: invalid options for pass 'rlx-amp': policy=f8: 'f8' is not one of always-f32, always-f16, auto-mixed-conservative, auto-mixed, auto-mixed-bf16, custom, torch-cuda, torch-cpu
// CLASS: rlx-opt: error: invalid options for pass 'rlx-amp': compute=i32: 'i32' is not one of f32, f16, bf16
// LOW: rlx-opt: error: invalid options for pass 'rlx-amp': low=f32: 'f32' is not one of f16, bf16
// NOLOW: rlx-opt: error: invalid options for pass 'rlx-amp': low=bf16: only policy=torch-cuda and policy=torch-cpu have a low precision to set, not policy=auto-mixed
// PEROP: rlx-opt: error: invalid options for pass 'rlx-amp': reduction: policy=torch-cuda chooses per op, not per AMP class; set single ops with ops=OP:PRECISION
// OPVALUE: rlx-opt: error: invalid options for pass 'rlx-amp': ops=mir.softmax:f8: 'f8' is not one of f32, f16, bf16, keep, promote
// OPNAME: amp-options.mlir:1:1: error: rlx-amp option ops: no op is named 'mir.softmx' (ops are named in full, e.g. mir.softmax)

// LIST:      {{^}}  rlx-amp{{$}}
// LIST-NEXT: {{^      [A-Z].+}}
// LIST-NEXT: {{^}}      --policy=always-f32|always-f16|auto-mixed-conservative|auto-mixed|auto-mixed-bf16|custom|torch-cuda|torch-cpu (default: "always-f32"){{$}}
// LIST-NEXT: {{^}}      --compute=f32|f16|bf16 (optional){{$}}
// LIST-NEXT: {{^}}      --reduction=f32|f16|bf16 (optional){{$}}
// LIST-NEXT: {{^}}      --elementwise=f32|f16|bf16 (optional){{$}}
// LIST-NEXT: {{^}}      --data-movement=f32|f16|bf16 (optional){{$}}
// LIST-NEXT: {{^}}      --low=f16|bf16 (optional){{$}}
// LIST-NEXT: {{^}}      --ops=OP:PRECISION,... (default: empty){{$}}
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = mir.softmax %x axis = -1 : (tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
