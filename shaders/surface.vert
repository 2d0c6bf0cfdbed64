// Boundary surface of the tet mesh. #version 330 core so the app also runs on a GL 3.3 context.
#version 330 core

layout(location = 0) in vec3 a_position; // world space
layout(location = 1) in vec3 a_normal;   // world space, smooth (recomputed every frame)
layout(location = 2) in float a_scalar;  // colour scalar (stress or displacement), unscaled

uniform mat4 u_view;       // rigid: its upper 3x3 also transforms normals
uniform mat4 u_projection;
uniform float u_scalar_min;   // bottom of the colour range
uniform float u_scalar_scale; // 1 / (top - bottom): (a_scalar - min) * it is the map coordinate

out vec3 v_position_view;
out vec3 v_normal_view;
out float v_scalar;

void main() {
    vec4 position_view = u_view * vec4(a_position, 1.0);
    v_position_view = position_view.xyz;
    v_normal_view = mat3(u_view) * a_normal;
    v_scalar = (a_scalar - u_scalar_min) * u_scalar_scale;
    gl_Position = u_projection * position_view;
}
