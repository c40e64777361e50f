//! Arrays split across several bindings (issue 34: any size that fits in device memory).
//!
//! One storage binding holds at most `max_storage_buffer_binding_size` bytes (2 GiB on NVIDIA,
//! 128 MiB on lavapipe) and one buffer at most `max_buffer_size`. The arrays that grow with the
//! list slots (partner words, incoming entries, shares, both slot-history tables) and the
//! per-particle arrays wider than 16 bytes (`motion`, 32 or 48 B, and `force`, 32 B) are
//! therefore kept as *parts*: buffers of at most `SplitLayout::cap_bytes` each, bound in group
//! 1 of the passes that use them, and read and written in WGSL through generated accessors
//! (`NAME_at(k)`, `NAME_put(k, v)`; `split_wgsl`) that pick the part. With one part (every
//! scene up to the cap) an accessor is a plain index and the passes bind as many buffers as
//! before. The narrow per-particle arrays (positions, image, grid and list bookkeeping: at most
//! 16 B a particle) stay whole: a 2 GiB binding holds 134M particles of them
//! (`SplitLayout::max_particles`).
//!
//! `TALUS_GPU_MAX_BINDING_BYTES` lowers the cap (tests split the 10k settle box's arrays with
//! it; the results are bit-identical, `tests/gpu_split.rs`).

use super::context::GpuContext;
use super::layout::{HistoryRecord, PairShare};
use crate::error::{Result, TalusError};
use crate::layout::consts::{MOTION_ROWS, MOTION_ROWS_DRY};

/// The environment variable that lowers the per-binding cap (bytes).
pub const MAX_BINDING_ENV: &str = "TALUS_GPU_MAX_BINDING_BYTES";

/// Byte alignment of every part: a multiple of wgpu's storage offset alignment, 256, and of
/// the element sizes below (the stored records' 24 and 32 too) but the full record's 40, whose
/// parts hold cap / 40 records (a part's bytes may then fall up to 36 short of the cap).
const PART_ALIGN: u64 = 2304;

/// The arrays that may be split.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Split {
    /// `SplitLayout::motion_rows` vec4 rows per particle: velocity, angular velocity, and where
    /// rolling work is booked the previous spin.
    Motion,
    /// Two vec4 rows per particle: force (w = strain energy), torque (w = contacts owned).
    Force,
    /// A u32 per list slot, the partner id and flags; where the slots are placed
    /// (`SplitLayout::places`) two, interleaved: the partner word of the slot at place k, then
    /// slot k's place (the index of its word, of its record in both history tables, of its
    /// share and of its entry in the incoming map; `slot_word_wgsl`).
    ListPartner,
    /// Two u32 per list slot: the incoming entries, then each slot's position among them.
    Incoming,
    /// A `PairShare` per list slot.
    Shares,
    /// A record per list slot (each of the two tables): the fields of a `HistoryRecord` the
    /// set-up's models use (`RecordLayout`), stored as `SlotRecord`.
    History,
}

impl Split {
    pub const ALL: [Split; 6] = [Split::Motion, Split::Force, Split::ListPartner, Split::Incoming, Split::Shares, Split::History];

    /// WGSL element type as stored and its size in bytes, the slot records as `record` lays
    /// them out.
    pub fn element(self, record: RecordLayout) -> (&'static str, u64) {
        match self {
            Split::Motion | Split::Force => ("vec4<f32>", 16),
            Split::ListPartner | Split::Incoming => ("u32", 4),
            Split::Shares => ("PairShare", std::mem::size_of::<PairShare>() as u64),
            Split::History => ("SlotRecord", record.bytes()),
        }
    }

    /// Elements for `n` particles of `motion_rows` motion rows and `slots` list slots of
    /// `slot_words` words each (`slot_words`).
    pub fn elements(self, n: u64, slots: u64, motion_rows: u32, slot_words: u32) -> u64 {
        match self {
            Split::Motion => motion_rows as u64 * n,
            Split::Force => 2 * n,
            Split::ListPartner => slot_words as u64 * slots,
            Split::Shares | Split::History => slots,
            Split::Incoming => 2 * slots,
        }
    }

    /// The array's name in messages (the slot-history tables: each of them).
    pub fn name(self) -> &'static str {
        match self {
            Split::Motion => "motion",
            Split::Force => "force",
            Split::ListPartner => "list partners",
            Split::Incoming => "incoming",
            Split::Shares => "shares",
            Split::History => "slot history (each table)",
        }
    }

    fn index(self) -> usize {
        Split::ALL.iter().position(|&s| s == self).expect("listed")
    }
}

/// One 4-byte field of a contact's history as the slot tables may store it, in the order of
/// `HistoryRecord`'s data (the index of each is its float's index in `HistoryRecord`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Word {
    ShearX,
    ShearY,
    ShearZ,
    Normal,
    Impact,
    Compliance,
    DashpotX,
    DashpotY,
    DashpotZ,
}

impl Word {
    const ALL: [Word; 9] = [Word::ShearX, Word::ShearY, Word::ShearZ, Word::Normal, Word::Impact, Word::Compliance, Word::DashpotX, Word::DashpotY, Word::DashpotZ];

    /// The field in a WGSL `HistoryRecord` named `r`.
    fn in_record(self) -> &'static str {
        match self {
            Word::ShearX => "r.shear_xy.x",
            Word::ShearY => "r.shear_xy.y",
            Word::ShearZ => "r.shear_z_normal.x",
            Word::Normal => "r.shear_z_normal.y",
            Word::Impact => "r.impact_compliance.x",
            Word::Compliance => "r.impact_compliance.y",
            Word::DashpotX => "r.dashpot_xy.x",
            Word::DashpotY => "r.dashpot_xy.y",
            Word::DashpotZ => "r.dashpot_z",
        }
    }
}

/// Which fields of a contact's history the slot tables store (`SplitLayout::record`): the
/// shear displacement and |F_n| always; the impact velocity only where a pair's law reads it
/// (hooke, hysteretic); the shear compliance and the last step's dashpot force only where
/// energy is booked (the stiffness work and the dashpot work's trapezoid read them, nothing
/// else does). A field a set-up never reads is not stored: it reads as zero. The bench bed's
/// records (hertz_mindlin, energy booked) take 32 bytes in two 16-byte accesses, untracked 16
/// in one, where the full record takes 40 in five 8-byte ones (docs/performance.md, "Records
/// as the set-up's laws need them"). The passes read and write `HistoryRecord`s through the tables'
/// accessors, which convert (`wgsl`); the wall-contact table and the host keep the full
/// record. (A checkpoint of an untracked run therefore carries no shear compliance; it resumes
/// with its own scene, untracked, which never reads it.)
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RecordLayout {
    /// The impact velocity is stored.
    pub impact: bool,
    /// The shear compliance and the dashpot force of the last step are stored (energy is
    /// booked).
    pub booked: bool,
}

impl RecordLayout {
    /// Every field: `HistoryRecord` itself.
    pub const FULL: RecordLayout = RecordLayout { impact: true, booked: true };
    /// A Hertz-family law (`hertz`, `hertz_mindlin`, `hertz_viscous`) with energy booked: 32
    /// bytes.
    pub const HERTZ_BOOKED: RecordLayout = RecordLayout { impact: false, booked: true };
    /// A Hertz-family law untracked: 16 bytes.
    pub const HERTZ_UNTRACKED: RecordLayout = RecordLayout { impact: false, booked: false };

    /// The fields `setup`'s pairs read: the impact velocity where some pair has the hooke or
    /// hysteretic law, the shear compliance and dashpot force where some pair books energy.
    pub fn of_setup(setup: &crate::setup::Setup) -> Self {
        use crate::contact::params::ContactModel;
        let pairs = &setup.pairs.entries;
        RecordLayout {
            impact: pairs.iter().any(|p| matches!(p.model, ContactModel::Hooke | ContactModel::Hysteretic)),
            booked: pairs.iter().any(|p| p.energy_tracking),
        }
    }

    fn words(self) -> Vec<Word> {
        Word::ALL.into_iter().filter(|w| match w {
            Word::Impact => self.impact,
            Word::Compliance | Word::DashpotX | Word::DashpotY | Word::DashpotZ => self.booked,
            _ => true,
        }).collect()
    }

    /// Fields per access: 4 (`vec4`s, 16 bytes) where the record's fields fill whole `vec4`s,
    /// so that a record 16 or 32 bytes long moves in one or two 16-byte accesses; else 2
    /// (`vec2`s, the last access maybe one `f32`), as the full record.
    fn per_access(self) -> usize {
        if self.words().len().is_multiple_of(4) {
            4
        } else {
            2
        }
    }

    /// The accesses that move a stored record, each one load or store instruction.
    pub fn accesses(self) -> u64 {
        self.words().len().div_ceil(self.per_access()) as u64
    }

    /// Bytes apart of the accesses within a record (16 or 8).
    pub fn access_bytes(self) -> u64 {
        4 * self.per_access() as u64
    }

    /// Bytes between two stored records: the accesses' bytes, a whole number of 8.
    pub fn bytes(self) -> u64 {
        (4 * self.words().len() as u64).next_multiple_of(8)
    }

    /// Bytes of a stored record that the shaders move (its fields; the padding untouched).
    pub fn data_bytes(self) -> u64 {
        4 * self.words().len() as u64
    }

    /// WGSL: `SlotRecord`, the record as stored, and `slot_record_of(r)` /
    /// `history_record_of(s)` between it and `HistoryRecord` (a field not stored reads 0).
    pub fn wgsl(self) -> String {
        if self == RecordLayout::FULL {
            return "alias SlotRecord = HistoryRecord;\n\
                    fn slot_record_of(r: HistoryRecord) -> SlotRecord { return r; }\n\
                    fn history_record_of(s: SlotRecord) -> HistoryRecord { return s; }\n"
                .to_string();
        }
        let words = self.words();
        let per = self.per_access();
        let lanes = ["x", "y", "z", "w"];
        // field k of the stored record: its member, and the component unless it is an f32
        let field = |k: usize| if k.is_multiple_of(per) && k + 1 == words.len() { format!("w{}", k / per) } else { format!("w{}.{}", k / per, lanes[k % per]) };
        let mut decl = Vec::new();
        let mut pack = Vec::new();
        for (a, part) in words.chunks(per).enumerate() {
            let ty = match part.len() {
                1 => "f32".to_string(),
                n => format!("vec{n}<f32>"),
            };
            let values: Vec<&str> = part.iter().map(|w| w.in_record()).collect();
            pack.push(if part.len() == 1 { values[0].to_string() } else { format!("{ty}({})", values.join(", ")) });
            decl.push(format!("w{a}: {ty}"));
        }
        let get = |w: Word| match words.iter().position(|&x| x == w) {
            Some(k) => format!("s.{}", field(k)),
            None => "0.0".to_string(),
        };
        let two = |a: Word, b: Word| format!("vec2<f32>({}, {})", get(a), get(b));
        format!(
            "struct SlotRecord {{ {} }}\n\
             fn slot_record_of(r: HistoryRecord) -> SlotRecord {{ return SlotRecord({}); }}\n\
             fn history_record_of(s: SlotRecord) -> HistoryRecord {{ return HistoryRecord({}, {}, {}, {}, {}); }}\n",
            decl.join(", "),
            pack.join(", "),
            two(Word::ShearX, Word::ShearY),
            two(Word::ShearZ, Word::Normal),
            two(Word::Impact, Word::Compliance),
            two(Word::DashpotX, Word::DashpotY),
            get(Word::DashpotZ)
        )
    }

    /// The `HistoryRecord`s of stored records `bytes` (a slot table read back), the fields not
    /// stored zero.
    pub fn decode(self, bytes: &[u8]) -> Vec<HistoryRecord> {
        let words = self.words();
        let floats: Vec<f32> = bytemuck::pod_collect_to_vec(bytes);
        let stride = (self.bytes() / 4) as usize;
        floats
            .chunks_exact(stride)
            .map(|stored| {
                let mut full = [0.0f32; 10];
                for (k, w) in words.iter().enumerate() {
                    full[*w as usize] = stored[k];
                }
                bytemuck::cast(full)
            })
            .collect()
    }
}

/// How every split array is cut: the cap on one binding, and the parts each array has now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SplitLayout {
    /// Bytes of one part at most: the adapter's binding and buffer limits, or the lower
    /// `TALUS_GPU_MAX_BINDING_BYTES`.
    pub cap_bytes: u64,
    /// vec4 rows per particle of `motion`: `MOTION_ROWS` (3) where rolling work is booked,
    /// else `MOTION_ROWS_DRY` (2; `motion_rows`). The passes see it as the WGSL constant
    /// `MOTION_ROWS` (`split_wgsl`).
    pub motion_rows: u32,
    /// Whether the device holds each particle's periodic image (`Buffers::image`): only a
    /// scene with a periodic axis moves one (`with_images`; true unless set). The passes see it
    /// as the WGSL constant `IMAGES` (`split_wgsl`); where it is false they never touch
    /// `image`, whose buffer is then one row.
    pub images: bool,
    /// Whether each list slot carries its place (`Split::ListPartner`; `with_places`, false
    /// unless set): `list_fill` lays the partner words, records, shares and incoming-map
    /// entries of a workgroup's slots out by the force pass's warps, column after column, so
    /// that a warp's threads reading their m-th contacts read consecutive ones
    /// (`shaders/list_build.wgsl`'s `slot_place_of`, `forces.wgsl`'s `slot_place_in_pass`).
    /// The passes see it as the WGSL constants `SLOT_PLACES` and `SLOT_WORDS`.
    pub places: bool,
    /// The fields the slot-history tables store (`RecordLayout`; every field unless set).
    pub record: RecordLayout,
    parts: [u32; 6],
}

/// What a set-up's split arrays hold, whatever their lengths: the motion rows, whether the
/// periodic images are held, whether the slots are placed and the fields a slot record keeps
/// (`SplitLayout`'s fields of the same names).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArrayShape {
    pub motion_rows: u32,
    pub images: bool,
    pub places: bool,
    pub record: RecordLayout,
}

/// Words per list slot in `Split::ListPartner`: 2 where slots carry their place, else 1.
pub fn slot_words(places: bool) -> u32 {
    if places {
        2
    } else {
        1
    }
}

/// The motion rows of a set-up that books rolling work (`rolling_booked`) or not.
pub fn motion_rows(rolling_booked: bool) -> u32 {
    if rolling_booked {
        MOTION_ROWS
    } else {
        MOTION_ROWS_DRY
    }
}

/// The per-binding cap for `ctx`'s limits, lowered to `lowered` (`GpuOptions::max_binding_bytes`)
/// or else to `TALUS_GPU_MAX_BINDING_BYTES`, rounded down to `PART_ALIGN`. A value that is not a number of bytes of at least `PART_ALIGN` is an error
/// naming the variable.
pub fn binding_cap(ctx: &GpuContext, lowered: Option<u64>) -> Result<u64> {
    binding_cap_for(&ctx.limits, lowered)
}

/// `binding_cap` for a device with `limits` (an adapter's, where no device is opened:
/// `talus info --shaders`).
pub fn binding_cap_for(limits: &wgpu::Limits, lowered: Option<u64>) -> Result<u64> {
    let adapter = limits.max_storage_buffer_binding_size.min(limits.max_buffer_size);
    let cap = match (lowered, std::env::var(MAX_BINDING_ENV)) {
        (Some(bytes), _) => {
            if bytes < PART_ALIGN {
                return Err(TalusError::Other(format!("a binding cap of {bytes} bytes: at least {PART_ALIGN}")));
            }
            bytes.min(adapter)
        }
        (None, Ok(v)) => {
            let bytes: u64 = v.trim().parse().map_err(|_| TalusError::Other(format!("environment variable {MAX_BINDING_ENV} = `{v}`: expected a number of bytes")))?;
            if bytes < PART_ALIGN {
                return Err(TalusError::Other(format!("environment variable {MAX_BINDING_ENV} = {bytes}: at least {PART_ALIGN} bytes")));
            }
            bytes.min(adapter)
        }
        (None, Err(_)) => adapter,
    };
    Ok(cap / PART_ALIGN * PART_ALIGN)
}

impl SplitLayout {
    /// The parts every array needs for `n` particles of `motion_rows` motion rows
    /// (`motion_rows`) and `slots` list slots under `cap_bytes`.
    pub fn new(cap_bytes: u64, n: u64, slots: u64, motion_rows: u32) -> Self {
        SplitLayout::of_shape(cap_bytes, n, slots, ArrayShape { motion_rows, images: true, places: false, record: RecordLayout::FULL })
    }

    /// The layout of arrays of `shape` for `n` particles and `slots` list slots under
    /// `cap_bytes`.
    pub fn of_shape(cap_bytes: u64, n: u64, slots: u64, shape: ArrayShape) -> Self {
        let ArrayShape { motion_rows, images, places, record } = shape;
        let parts = Split::ALL.map(|s| {
            let (_, bytes) = s.element(record);
            (s.elements(n.max(1), slots.max(1), motion_rows, slot_words(places)) * bytes).div_ceil(cap_bytes).max(1) as u32
        });
        SplitLayout { cap_bytes, motion_rows, images, places, record, parts }
    }

    /// What these arrays hold (`ArrayShape`).
    pub fn shape(&self) -> ArrayShape {
        ArrayShape { motion_rows: self.motion_rows, images: self.images, places: self.places, record: self.record }
    }

    /// This layout with the periodic images held or not (`images`).
    pub fn with_images(self, images: bool) -> Self {
        SplitLayout { images, ..self }
    }

    /// This layout for `n` particles and `slots` slots, the slots placed or not (`places`).
    pub fn with_places(self, n: u64, slots: u64, places: bool) -> Self {
        SplitLayout::of_shape(self.cap_bytes, n, slots, ArrayShape { places, ..self.shape() })
    }

    /// This layout for `n` particles and `slots` slots, the slot records laid out as `record`
    /// says.
    pub fn with_record(self, n: u64, slots: u64, record: RecordLayout) -> Self {
        SplitLayout::of_shape(self.cap_bytes, n, slots, ArrayShape { record, ..self.shape() })
    }

    /// The same cut for `n` particles and `slots` slots (what the arrays hold kept).
    pub fn resized(&self, n: u64, slots: u64) -> Self {
        SplitLayout::of_shape(self.cap_bytes, n, slots, self.shape())
    }

    /// Elements of `s` for `n` particles and `slots` list slots with this layout's motion rows
    /// and slot words.
    pub fn elements(&self, s: Split, n: u64, slots: u64) -> u64 {
        s.elements(n, slots, self.motion_rows, slot_words(self.places))
    }

    /// The WGSL element type of `s` as stored and its size in bytes.
    pub fn element(&self, s: Split) -> (&'static str, u64) {
        s.element(self.record)
    }

    /// Parts of `s`.
    pub fn parts(&self, s: Split) -> u32 {
        self.parts[s.index()]
    }

    /// Elements of `s` per part (every part but the last is full).
    pub fn part_elements(&self, s: Split) -> u64 {
        self.cap_bytes / self.element(s).1
    }

    /// Storage bindings the split arrays of a pass take beyond one each.
    pub fn extra_bindings(&self, uses: &[(&str, Split, bool)]) -> u32 {
        uses.iter().map(|&(_, s, _)| self.parts(s) - 1).sum()
    }

    /// "arrays split across storage bindings of at most N bytes: motion 3 parts, …", or `None`
    /// when every array is whole.
    pub fn describe(&self) -> Option<String> {
        let split: Vec<String> = Split::ALL.iter().filter(|&&s| self.parts(s) > 1).map(|&s| format!("{} {} parts", s.name(), self.parts(s))).collect();
        (!split.is_empty()).then(|| format!("arrays split across storage bindings of at most {} bytes: {}", self.cap_bytes, split.join(", ")))
    }

    /// The most particles whose unsplit per-particle arrays (16 B per element at most: block,
    /// offset, image) fit one binding.
    pub fn max_particles(&self) -> u64 {
        self.cap_bytes / 16
    }
}

/// WGSL of the split arrays a pass uses, `(name, array, read_write)` in binding order: the
/// part bindings in group 1, and `NAME_at(k)` (and, read-write, `NAME_put(k, v)`) over them
/// (the slot-history tables' take and give `HistoryRecord`s, stored as `SlotRecord`,
/// `RecordLayout::wgsl`); first the constants `MOTION_ROWS`, the layout's rows of `motion`, and
/// `IMAGES`, whether the device holds the periodic images.
pub fn split_wgsl(layout: &SplitLayout, uses: &[(&str, Split, bool)]) -> String {
    let mut s = format!(
        "const MOTION_ROWS: u32 = {}u;\nconst IMAGES: bool = {};\nconst SLOT_PLACES: bool = {};\nconst SLOT_WORDS: u32 = {}u;\n",
        layout.motion_rows,
        layout.images,
        layout.places,
        slot_words(layout.places)
    );
    if uses.iter().any(|&(_, array, _)| array == Split::History) {
        s.push_str(&layout.record.wgsl());
    }
    let mut binding = 0;
    for &(name, array, rw) in uses {
        let (stored, _) = layout.element(array);
        // the type the accessors take and give, and the conversions from and to the stored one
        let (ty, read, write) = match array {
            Split::History => ("HistoryRecord", "history_record_of", "slot_record_of"),
            _ => (stored, "", ""),
        };
        let parts = layout.parts(array);
        let access = if rw { "read_write" } else { "read" };
        for p in 0..parts {
            s.push_str(&format!("@group(1) @binding({binding}) var<storage, {access}> {name}_{p}: array<{stored}>;\n"));
            binding += 1;
        }
        if array == Split::ListPartner {
            s.push_str(&slot_word_wgsl(name, rw));
        }
        let per = layout.part_elements(array);
        if parts == 1 {
            s.push_str(&format!("fn {name}_at(k: u32) -> {ty} {{ return {read}({name}_0[k]); }}\n"));
            if rw {
                s.push_str(&format!("fn {name}_put(k: u32, v: {ty}) {{ {name}_0[k] = {write}(v); }}\n"));
            }
            continue;
        }
        let cases = |body: &dyn Fn(u32) -> String| -> String {
            let mut c = String::new();
            for p in 0..parts {
                let label = if p + 1 == parts { "default".to_string() } else { format!("case {p}u") };
                c.push_str(&format!("        {label}: {{ {} }}\n", body(p)));
            }
            c
        };
        s.push_str(&format!(
            "fn {name}_at(k: u32) -> {ty} {{\n    let e = k % {per}u;\n    var v: {stored};\n    switch (k / {per}u) {{\n{}    }}\n    return {read}(v);\n}}\n",
            cases(&|p| format!("v = {name}_{p}[e];"))
        ));
        if rw {
            s.push_str(&format!(
                "fn {name}_put(k: u32, v: {ty}) {{\n    let e = k % {per}u;\n    let stored = {write}(v);\n    switch (k / {per}u) {{\n{}    }}\n}}\n",
                cases(&|p| format!("{name}_{p}[e] = stored;"))
            ));
        }
    }
    s
}

/// The accessors of list slots in `Split::ListPartner` array `name`. Where slots are placed
/// (`SLOT_PLACES`), element 2k + 1 holds slot k's place and element 2p the partner word of the
/// slot at place p, so that a SIMD group's threads reading their m-th slots read consecutive
/// words too; else element k is slot k's word and its place is k. `NAME_place(k)`, slot k's
/// place; `NAME_word(k)`, its word (through its place); `NAME_word_at(p)`, the word of the slot
/// at place p; and, read-write, `NAME_place_put(k, p)` (nothing where slots are not placed),
/// `NAME_word_put(k, w)` and `NAME_word_put_at(p, w)`.
fn slot_word_wgsl(name: &str, rw: bool) -> String {
    let mut s = format!(
        "fn {name}_place(k: u32) -> u32 {{\n    if (SLOT_PLACES) {{ return {name}_at(2u * k + 1u); }}\n    return k;\n}}\n\
         fn {name}_word_at(p: u32) -> u32 {{ return {name}_at(SLOT_WORDS * p); }}\n\
         fn {name}_word(k: u32) -> u32 {{ return {name}_word_at({name}_place(k)); }}\n"
    );
    if rw {
        s.push_str(&format!(
            "fn {name}_place_put(k: u32, p: u32) {{\n    if (SLOT_PLACES) {{ {name}_put(2u * k + 1u, p); }}\n}}\n\
             fn {name}_word_put_at(p: u32, w: u32) {{ {name}_put(SLOT_WORDS * p, w); }}\n\
             fn {name}_word_put(k: u32, w: u32) {{ {name}_word_put_at({name}_place(k), w); }}\n"
        ));
    }
    s
}

/// An array kept as parts of at most `SplitLayout::cap_bytes` each.
pub struct SplitBuffer {
    pub array: Split,
    /// Bytes of one element as stored (`SplitLayout::element`).
    element_bytes: u64,
    /// The parts, in order; every part but the last holds `part_elements` elements.
    pub parts: Vec<wgpu::Buffer>,
    pub part_elements: u64,
    /// Elements held (the array's length).
    pub elements: u64,
}

impl SplitBuffer {
    /// `elements` elements of `array` cut as `layout` says, each part created with `usage`.
    pub fn new(ctx: &GpuContext, label: &str, array: Split, elements: u64, layout: &SplitLayout, usage: wgpu::BufferUsages) -> Result<Self> {
        let (_, bytes) = layout.element(array);
        let per = layout.part_elements(array);
        let elements = elements.max(1);
        let n_parts = elements.div_ceil(per);
        debug_assert_eq!(n_parts as u32, layout.parts(array), "{label}: the parts made are the parts the shaders bind");
        let mut parts = Vec::new();
        for p in 0..n_parts {
            let len = per.min(elements - p * per);
            let name = if n_parts == 1 { label.to_string() } else { format!("{label} part {p}") };
            parts.push(ctx.create_buffer(&name, len * bytes, usage)?);
        }
        Ok(SplitBuffer { array, element_bytes: bytes, parts, part_elements: per, elements })
    }

    /// Bytes of all parts.
    pub fn size(&self) -> u64 {
        self.parts.iter().map(|p| p.size()).sum()
    }

    /// Bytes of one element.
    pub fn element_bytes(&self) -> u64 {
        self.element_bytes
    }

    /// (part, byte offset in it, bytes) of the elements `[first, first + count)`, part by part.
    pub fn ranges(&self, first: u64, count: u64) -> Vec<(&wgpu::Buffer, u64, u64)> {
        let eb = self.element_bytes();
        let mut out = Vec::new();
        let (mut k, end) = (first, (first + count).min(self.elements));
        while k < end {
            let p = (k / self.part_elements) as usize;
            let e = k % self.part_elements;
            let take = (self.part_elements - e).min(end - k);
            out.push((&self.parts[p], e * eb, take * eb));
            k += take;
        }
        out
    }

    /// Write `data` (whole elements) from element `first` on.
    pub fn write(&self, queue: &wgpu::Queue, first: u64, data: &[u8]) {
        let eb = self.element_bytes();
        let mut at = 0usize;
        for (buf, off, len) in self.ranges(first, data.len() as u64 / eb) {
            queue.write_buffer(buf, off, &data[at..at + len as usize]);
            at += len as usize;
        }
    }

    /// A new array of `elements` elements cut as `layout` says (storage, copy source and
    /// destination), holding this one's first `count` elements (copied by `enc`).
    pub fn copied(&self, ctx: &GpuContext, enc: &mut wgpu::CommandEncoder, label: &str, elements: u64, count: u64, layout: &SplitLayout) -> Result<SplitBuffer> {
        let usage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::COPY_SRC;
        let out = SplitBuffer::new(ctx, label, self.array, elements, layout, usage)?;
        out.copy_from(enc, self, count.min(self.elements).min(elements));
        Ok(out)
    }

    /// Copy the first `count` elements of `src` (same array) into this one's, part by part.
    pub fn copy_from(&self, enc: &mut wgpu::CommandEncoder, src: &SplitBuffer, count: u64) {
        let eb = self.element_bytes();
        debug_assert_eq!(eb, src.element_bytes(), "copies between arrays of one element layout");
        let mut k = 0;
        for (buf, off, len) in src.ranges(0, count) {
            let n = len / eb;
            let mut done = 0;
            for (dst, doff, dlen) in self.ranges(k, n) {
                enc.copy_buffer_to_buffer(buf, off + done, dst, doff, dlen);
                done += dlen;
            }
            k += n;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `records` as the slot tables store them under `record` (what `slot_record_of` writes).
    fn encode(record: RecordLayout, records: &[HistoryRecord]) -> Vec<u8> {
        let words = record.words();
        let stride = (record.bytes() / 4) as usize;
        let mut out = vec![0.0f32; stride * records.len()];
        for (r, stored) in records.iter().zip(out.chunks_exact_mut(stride)) {
            let full: [f32; 10] = bytemuck::cast(*r);
            for (k, w) in words.iter().enumerate() {
                stored[k] = full[*w as usize];
            }
        }
        bytemuck::cast_slice(&out).to_vec()
    }

    #[test]
    fn stored_records_decode_to_their_fields_and_zeros() {
        let records: Vec<HistoryRecord> = (0..5).map(|k| bytemuck::cast(std::array::from_fn::<f32, 10, _>(|j| if j == 9 { 0.0 } else { (10 * k + j + 1) as f32 }))).collect();
        for (impact, booked) in [(true, true), (false, true), (true, false), (false, false)] {
            let record = RecordLayout { impact, booked };
            let bytes = encode(record, &records);
            assert_eq!(bytes.len() as u64, 5 * record.bytes());
            for (back, r) in record.decode(&bytes).iter().zip(&records) {
                let (back, r): ([f32; 10], [f32; 10]) = (bytemuck::cast(*back), bytemuck::cast(*r));
                for j in 0..9 {
                    let stored = match Word::ALL[j] {
                        Word::Impact => impact,
                        Word::Compliance | Word::DashpotX | Word::DashpotY | Word::DashpotZ => booked,
                        _ => true,
                    };
                    assert_eq!(back[j], if stored { r[j] } else { 0.0 }, "{record:?}, field {:?}", Word::ALL[j]);
                }
            }
        }
        // the full layout is `HistoryRecord` byte for byte
        assert_eq!(RecordLayout::FULL.bytes(), std::mem::size_of::<HistoryRecord>() as u64);
        assert_eq!(RecordLayout::FULL.decode(bytemuck::cast_slice(&records)), records);
    }
}
