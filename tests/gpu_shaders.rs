//! Every composed GPU shader parses and validates with naga, and every `gpu_struct` has the
//! same size and member offsets in WGSL (as naga lays it out) as in Rust.

use talus::gpu::layout::struct_layouts;
use talus::gpu::shader::{compose, contact_sources, pass_module, pass_sources, pass_splits};
use talus::gpu::split::{RecordLayout, Split, SplitLayout};

/// Every way a set-up's slot records may be laid out (`RecordLayout::of_setup`).
fn record_layouts() -> Vec<RecordLayout> {
    [(true, true), (false, true), (true, false), (false, false)].into_iter().map(|(impact, booked)| RecordLayout { impact, booked }).collect()
}

fn validate(name: &str, src: &str) -> naga::Module {
    let module = naga::front::wgsl::parse_str(src).unwrap_or_else(|e| panic!("pass `{name}` does not parse:\n{}", e.emit_to_string(src)));
    naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::default())
        .validate(&module)
        .unwrap_or_else(|e| panic!("pass `{name}` does not validate:\n{}", e.emit_to_string(src)));
    module
}

#[test]
fn every_composed_pass_validates() {
    let passes = pass_sources();
    assert!(passes.len() >= 10);
    // the mesh-wall shaders: binning, and the contact code inside `forces` and `wall_loads`
    assert!(passes.iter().any(|(n, _)| *n == "mesh_bin"), "mesh_bin is a pass");
    for pass in ["forces", "wall_loads"] {
        let src = &passes.iter().find(|(n, _)| *n == pass).unwrap().1;
        for f in ["fn closest_point_on_triangle", "fn ball_mesh_contacts", "fn mesh_view", "fn surface_contact"] {
            assert!(src.contains(f), "`{pass}` lacks `{f}`");
        }
    }
    // every array in one binding, and cut into parts (a 10k box at a 225 KiB cap: motion in
    // 3, force 2, incoming 2, shares 4, each history table 7; the partner words stay whole);
    // motion with the previous spin (rolling work booked) and without (2 parts then), the
    // periodic images held and not, the list slots placed and not
    let rolling = talus::gpu::split::motion_rows(true);
    let one = SplitLayout::new(1 << 30, 10_000, 35_000, rolling);
    let cut = SplitLayout::new(2304 * 100, 10_000, 35_000, rolling);
    let arrays = [Split::Motion, Split::Force, Split::ListPartner, Split::Incoming, Split::Shares, Split::History];
    assert_eq!(arrays.map(|s| cut.parts(s)), [3, 2, 1, 2, 4, 7]);
    let dry = talus::gpu::split::motion_rows(false);
    // (and without the periodic images, as a scene without a periodic axis)
    let (one_dry, cut_dry) = (SplitLayout::new(1 << 30, 10_000, 35_000, dry).with_images(false), SplitLayout::new(2304 * 100, 10_000, 35_000, dry).with_images(false));
    assert_eq!(arrays.map(|s| cut_dry.parts(s)), [2, 2, 1, 2, 4, 7]);
    // list slots carrying their place: two words a slot, the partner words in 2 parts
    let cut_placed = cut_dry.clone().with_places(10_000, 35_000, true);
    assert_eq!(arrays.map(|s| cut_placed.parts(s)), [2, 2, 2, 2, 4, 7]);
    let one_placed = one_dry.clone().with_places(10_000, 35_000, true);
    for (name, _) in &passes {
        let whole_placed = validate(name, &pass_module(name, &one_placed));
        let parts_placed = validate(name, &pass_module(name, &cut_placed));
        assert_eq!(storage_bindings(&parts_placed), storage_bindings(&whole_placed) + cut_placed.extra_bindings(pass_splits(name)), "pass `{name}`: one binding per part");
        let whole_dry = validate(name, &pass_module(name, &one_dry));
        let parts_dry = validate(name, &pass_module(name, &cut_dry));
        assert_eq!(storage_bindings(&parts_dry), storage_bindings(&whole_dry) + cut_dry.extra_bindings(pass_splits(name)), "pass `{name}`: one binding per part");
        let whole = validate(name, &pass_module(name, &one));
        // one part each: at most the 16 storage buffers every adapter grants
        // (`context::STORAGE_BUFFERS_NEEDED`)
        assert!(storage_bindings(&whole) <= 16, "pass `{name}` binds {} storage buffers", storage_bindings(&whole));
        // a dry scene's module (the adhesion files left out, their stubs in their place)
        validate(name, &talus::gpu::shader::pass_module_for(name, &one, false));
        let parts = validate(name, &pass_module(name, &cut));
        assert_eq!(storage_bindings(&parts), storage_bindings(&whole) + cut.extra_bindings(pass_splits(name)), "pass `{name}`: one binding per part");
        // the slot records as each set-up's laws need them, whole and cut
        for record in record_layouts() {
            validate(name, &pass_module(name, &one.clone().with_record(10_000, 35_000, record)));
            validate(name, &pass_module(name, &cut.clone().with_record(10_000, 35_000, record)));
        }
    }
    // 32-byte records (a Hertz-family law with energy booked): 5 parts each where 40-byte ones
    // take 7
    let lean = cut.clone().with_record(10_000, 35_000, RecordLayout::HERTZ_BOOKED);
    assert_eq!(lean.parts(Split::History), 5);
}

/// Storage buffers a module binds.
fn storage_bindings(m: &naga::Module) -> u32 {
    m.global_variables.iter().filter(|(_, g)| matches!(g.space, naga::AddressSpace::Storage { .. })).count() as u32
}

#[test]
fn composition_order() {
    let s = compose("// PASS");
    let mut last = 0;
    let mut marks: Vec<String> = vec!["const WALL_KEY_BIT".into(), "struct PairParamsGpu".into(), "struct SimParams".into()];
    marks.extend(contact_sources().iter().map(|(n, _)| format!("contact/{n}")));
    marks.push("// PASS".into());
    for m in &marks {
        let at = s.find(m.as_str()).unwrap_or_else(|| panic!("`{m}` missing from the composed shader"));
        assert!(at >= last, "`{m}` out of order");
        last = at;
    }
}

#[test]
fn struct_layouts_match_rust() {
    // A module using every struct so none can be dropped.
    let mut uses = String::new();
    for (k, l) in struct_layouts().iter().enumerate() {
        uses.push_str(&format!("@group(0) @binding({k}) var<storage, read_write> use_{k}: array<{}>;\n", l.name));
    }
    let src = compose(&uses);
    let module = validate("layout", &src);
    for l in struct_layouts() {
        let (_, ty) = module
            .types
            .iter()
            .find(|(_, t)| t.name.as_deref() == Some(l.name))
            .unwrap_or_else(|| panic!("struct {} not in the module", l.name));
        let naga::TypeInner::Struct { members, span } = &ty.inner else { panic!("{} is not a struct", l.name) };
        assert_eq!(*span as usize, l.size, "{}: WGSL size {} != Rust size {}", l.name, span, l.size);
        assert_eq!(members.len(), l.offsets.len(), "{}: member count", l.name);
        for (m, (rn, ro)) in members.iter().zip(&l.offsets) {
            assert_eq!(m.name.as_deref(), Some(*rn), "{}: member order", l.name);
            assert_eq!(m.offset as usize, *ro, "{}.{}: WGSL offset {} != Rust offset {}", l.name, rn, m.offset, ro);
        }
    }
}

/// The structs packed into `mesh_data` are read back word by word by the accessors of
/// `shaders/mesh/data.wgsl`: their fields must be vec4s at 16-byte steps, then at most one word
/// of four 4-byte scalars, filling exactly the stated number of words.
#[test]
fn packed_structs_are_whole_words() {
    use talus::gpu::layout::packed_structs;
    let layouts = struct_layouts();
    for (name, words) in packed_structs() {
        let l = layouts.iter().find(|l| l.name == name).unwrap_or_else(|| panic!("{name} is not a gpu_struct"));
        let words = words as usize;
        assert_eq!(l.size, 16 * words, "{name}: size");
        let vec4s = if l.offsets.len() == words { words } else { words - 1 };
        assert!(l.offsets.len() == vec4s || l.offsets.len() == vec4s + 4, "{name}: {} fields in {words} words", l.offsets.len());
        for (k, (field, offset)) in l.offsets.iter().enumerate() {
            let expect = if k < vec4s { 16 * k } else { 16 * vec4s + 4 * (k - vec4s) };
            assert_eq!(*offset, expect, "{name}.{field}");
        }
    }
}

/// Struct `name` of `module` as a record moved member by member: every member a vector of
/// `wide` f32s but maybe the last, one f32. Returns (members, stride, bytes up to the last
/// member's end: the data the shaders move).
fn record_members(module: &naga::Module, name: &str, wide: u64) -> (u64, u64, u64) {
    let (_, ty) = module.types.iter().find(|(_, t)| t.name.as_deref() == Some(name)).unwrap_or_else(|| panic!("{name} is not in the module"));
    let naga::TypeInner::Struct { members, span } = &ty.inner else { panic!("{name} is not a struct") };
    let width = |m: &naga::StructMember| match module.types[m.ty].inner {
        naga::TypeInner::Vector { size, .. } => size as u64,
        _ => 1,
    };
    let narrow: Vec<usize> = members.iter().enumerate().filter(|(_, m)| width(m) != wide).map(|(k, _)| k).collect();
    assert!(narrow.is_empty() || (narrow == [members.len() - 1] && width(&members[narrow[0]]) == 1), "{name}: members of another width than {wide} at {narrow:?}");
    let last = members.last().unwrap();
    (members.len() as u64, *span as u64, last.offset as u64 + 4 * width(last))
}

/// The per-slot records the force pass moves across a warp's scattered slots are 8-byte aligned
/// and made of `vec2`s (docs/performance.md, "Records moved in 8-byte words"): a struct of
/// scalars at a 4-byte-aligned stride is moved a word at a time by NVIDIA's compiler. At most
/// one scalar, last; the record's padding is WGSL's implicit tail, not a member the shaders
/// would write, and the traffic model counts the bytes before it. The slot tables' records of
/// 16 or 32 bytes (`RecordLayout`) are `vec4`s, moved in 16-byte words.
#[test]
fn slot_records_move_in_8_byte_words() {
    let mut uses = String::new();
    for (k, name) in ["HistoryRecord", "PairShare"].iter().enumerate() {
        uses.push_str(&format!("@group(0) @binding({k}) var<storage, read_write> use_{k}: array<{name}>;\n"));
    }
    let module = validate("records", &compose(&uses));
    for (name, data_bytes) in [("HistoryRecord", talus::gpu::layout::RECORD_DATA_BYTES), ("PairShare", 24)] {
        let (_, span, end) = record_members(&module, name, 2);
        assert_eq!(span % 8, 0, "{name}: a stride of {span} bytes is not 8-byte aligned");
        assert_eq!(end, data_bytes, "{name}: the data the shaders move");
    }
    // the slot tables' records as stored: `vec4`s where the fields fill them (16 or 32 bytes:
    // one or two 16-byte accesses), else the same rule as above; at the stride, with the
    // accesses and the data the Rust side counts (`RecordLayout::bytes`, `accesses`,
    // `data_bytes`)
    for record in record_layouts() {
        let src = compose(&format!("{}@group(0) @binding(0) var<storage, read_write> use_0: array<SlotRecord>;\n", record.wgsl()));
        let module = validate("slot records", &src);
        let name = if record == RecordLayout::FULL { "HistoryRecord" } else { "SlotRecord" };
        let (members, span, end) = record_members(&module, name, record.access_bytes() / 4);
        assert_eq!(span, record.bytes(), "{record:?}: the stride");
        assert_eq!(members, record.accesses(), "{record:?}: one member an access");
        assert_eq!(end, record.data_bytes(), "{record:?}: the data the shaders move");
    }
    // 16-byte accesses where the record is 16 or 32 bytes
    assert_eq!(record_layouts().iter().map(|r| (r.accesses(), r.access_bytes())).collect::<Vec<_>>(), [(5, 8), (2, 16), (3, 8), (1, 16)]);
    assert_eq!(record_layouts().iter().map(|r| r.bytes()).collect::<Vec<_>>(), [40, 32, 24, 16]);
}
