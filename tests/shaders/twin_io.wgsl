// Bindings and I/O helpers every twin test kernel uses (prepended by
// tests/common/twin.rs::run_twin_kernel): one random state of IN_STRIDE floats per invocation
// in `inputs`, its pair parameters in `params`, OUT_STRIDE results per invocation in `outputs`.

@group(0) @binding(0) var<storage, read> inputs: array<f32>;
@group(0) @binding(1) var<storage, read> params: array<PairParamsGpu>;
@group(0) @binding(2) var<storage, read_write> outputs: array<f32>;

fn in3(base: u32) -> vec3<f32> {
    return vec3<f32>(inputs[base], inputs[base + 1u], inputs[base + 2u]);
}

fn put(o: u32, v: f32) {
    outputs[o] = v;
}

fn put3(o: u32, v: vec3<f32>) {
    outputs[o] = v.x;
    outputs[o + 1u] = v.y;
    outputs[o + 2u] = v.z;
}
