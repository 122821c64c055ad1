"""File and bit formats of weights: named arrays in `.safetensors` / `.npz` / `.onnx`
(`weights`), the bit formats of quantised weights (`quantformats`: FP8, FP4, int4 tables),
and packing float weights into quantised parameters (`quantpack`, GGUF K-quant
super-blocks in `quantpack_k`).

May import: the root modules below the dialects (`dtypes`, `numerics`, `shapes`) and
numpy; optional readers (`safetensors`, `onnx`) only inside the function that needs them.
"""
