//! Mesh topology: welded vertices, edge adjacency and coplanar facet groups.
//!
//! Vertices are welded when they coincide within `tol` (the mesh tolerance, 1e-9 of the mesh
//! size; exact duplicates always weld). Two triangles are neighbours across an edge when their
//! welded end points match. A facet group is the flood fill, across shared edges, of the
//! triangles that lie in the plane of the group's seed (its smallest triangle index): normal
//! dot > 1 − 1e-9 and every vertex within `tol` of the seed's plane. Comparing with the seed,
//! not with the neighbour, keeps a group planar: a finely tessellated curve never chains into
//! one group. Group ids are numbered in order of their seeds, so they are deterministic.

use std::collections::HashMap;

use glam::DVec3;

/// `neighbours[t][k]` for an edge on the boundary or shared by more than two triangles.
pub const NO_NEIGHBOUR: u32 = u32::MAX;

/// Normals of one facet group differ by less than this in their dot product from 1.
pub const COPLANAR_DOT: f64 = 1.0 - 1e-9;

/// Welded vertex id of every corner (first occurrence numbers first) and the vertex count.
pub fn weld(triangles: &[[DVec3; 3]], tol: f64) -> (Vec<[u32; 3]>, u32) {
    let origin = bounds_min(triangles);
    let cell = tol.max(f64::MIN_POSITIVE);
    let key = |p: DVec3| ((p - origin) / cell).floor().as_i64vec3().to_array();
    let mut buckets: HashMap<[i64; 3], Vec<u32>> = HashMap::new();
    // exact repeats skip the search: they get what their first occurrence got
    let mut exact: HashMap<[u64; 3], u32> = HashMap::new();
    let mut points: Vec<DVec3> = Vec::new();
    let mut corners = Vec::with_capacity(triangles.len());
    for t in triangles {
        let mut ids = [0u32; 3];
        for (k, &p) in t.iter().enumerate() {
            let bits = p.to_array().map(f64::to_bits);
            ids[k] = *exact.entry(bits).or_insert_with(|| weld_one(p, key(p), tol, &mut buckets, &mut points));
        }
        corners.push(ids);
    }
    (corners, points.len() as u32)
}

/// The id of the lowest-numbered vertex within `tol` of `p` (27 cells around), or a new one.
fn weld_one(p: DVec3, cell: [i64; 3], tol: f64, buckets: &mut HashMap<[i64; 3], Vec<u32>>, points: &mut Vec<DVec3>) -> u32 {
    let mut best = u32::MAX;
    for dz in -1..=1 {
        for dy in -1..=1 {
            for dx in -1..=1 {
                let Some(ids) = buckets.get(&[cell[0] + dx, cell[1] + dy, cell[2] + dz]) else { continue };
                for &id in ids {
                    if id < best && points[id as usize].distance(p) <= tol {
                        best = id;
                    }
                }
            }
        }
    }
    if best != u32::MAX {
        return best;
    }
    let id = points.len() as u32;
    points.push(p);
    buckets.entry(cell).or_default().push(id);
    id
}

/// Smallest coordinates over all vertices.
fn bounds_min(triangles: &[[DVec3; 3]]) -> DVec3 {
    triangles.iter().flatten().fold(DVec3::splat(f64::INFINITY), |m, &v| m.min(v))
}

/// The triangle edges that share welded end points, grouped in runs.
pub struct EdgeRuns {
    /// (triangle, edge k) of every edge, sorted by welded end points (then triangle).
    pub edges: Vec<(u32, u8)>,
    /// `runs[r]..runs[r + 1]` is one run of `edges` with the same end points.
    pub runs: Vec<u32>,
    /// Run index of edge k of triangle t at `3 t + k`.
    pub run_of: Vec<u32>,
}

impl EdgeRuns {
    /// The (triangle, edge) pairs that share edge k of triangle t (t itself included).
    pub fn sharing(&self, t: usize, k: usize) -> &[(u32, u8)] {
        let r = self.run_of[3 * t + k] as usize;
        &self.edges[self.runs[r] as usize..self.runs[r + 1] as usize]
    }
}

/// Sort all edges by their welded end points (one sort, so the order is deterministic).
pub fn edge_runs(corners: &[[u32; 3]]) -> EdgeRuns {
    let mut keyed: Vec<(u32, u32, u32, u8)> = Vec::with_capacity(3 * corners.len());
    for (t, c) in corners.iter().enumerate() {
        for k in 0..3 {
            let (i, j) = (c[k], c[(k + 1) % 3]);
            keyed.push((i.min(j), i.max(j), t as u32, k as u8));
        }
    }
    keyed.sort_unstable();
    let mut runs = Vec::new();
    let mut run_of = vec![0u32; keyed.len()];
    for (e, &(lo, hi, t, k)) in keyed.iter().enumerate() {
        if e == 0 || (keyed[e - 1].0, keyed[e - 1].1) != (lo, hi) {
            runs.push(e as u32);
        }
        run_of[3 * t as usize + k as usize] = runs.len() as u32 - 1;
    }
    runs.push(keyed.len() as u32);
    EdgeRuns { edges: keyed.iter().map(|&(_, _, t, k)| (t, k)).collect(), runs, run_of }
}

/// The neighbour across each edge: the other triangle of a run of two, else `NO_NEIGHBOUR`.
pub fn neighbours(runs: &EdgeRuns, n_triangles: usize) -> Vec<[u32; 3]> {
    let mut out = vec![[NO_NEIGHBOUR; 3]; n_triangles];
    for (t, row) in out.iter_mut().enumerate() {
        for (k, slot) in row.iter_mut().enumerate() {
            let shared = runs.sharing(t, k);
            if shared.len() == 2 {
                *slot = shared.iter().map(|&(u, _)| u).find(|&u| u as usize != t).unwrap_or(NO_NEIGHBOUR);
            }
        }
    }
    out
}

/// Facet group of every triangle and the group count (flood fill from each unassigned
/// triangle in index order, across shared edges, into the seed's plane).
pub fn facet_groups(triangles: &[[DVec3; 3]], normals: &[DVec3], runs: &EdgeRuns, tol: f64) -> (Vec<u32>, u32) {
    let mut group = vec![u32::MAX; triangles.len()];
    let mut count = 0u32;
    let mut stack = Vec::new();
    for seed in 0..triangles.len() {
        if group[seed] != u32::MAX {
            continue;
        }
        group[seed] = count;
        stack.push(seed);
        while let Some(t) = stack.pop() {
            for k in 0..3 {
                for &(u, _) in runs.sharing(t, k) {
                    let u = u as usize;
                    if group[u] == u32::MAX && in_plane(triangles, normals, seed, u, tol) {
                        group[u] = count;
                        stack.push(u);
                    }
                }
            }
        }
        count += 1;
    }
    (group, count)
}

/// Whether triangle `u` lies in the plane of triangle `seed` (same normal, vertices within tol).
pub fn in_plane(triangles: &[[DVec3; 3]], normals: &[DVec3], seed: usize, u: usize, tol: f64) -> bool {
    let n = normals[seed];
    let origin = triangles[seed][0];
    n.dot(normals[u]) > COPLANAR_DOT && triangles[u].iter().all(|&v| n.dot(v - origin).abs() <= tol)
}
