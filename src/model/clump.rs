//! STUB until helper branch clump-templates lands (MERGE).
#[derive(Clone, Debug, PartialEq)]
pub struct ComponentSphere { pub offset: [f64; 3], pub radius: f64 }
#[derive(Clone, Debug, PartialEq)]
pub struct ClumpTemplate { pub name: String, pub material: u32, pub spheres: Vec<ComponentSphere>, pub mass: f64, pub volume: f64, pub principal_moments: [f64; 3], pub to_principal: [f64; 4], pub centre: [f64; 3], pub bounding_radius: f64 }
