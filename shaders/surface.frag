// Headlight shading: the light sits at the camera, so every visible front face is lit.
#version 330 core

in vec3 v_position_view;
in vec3 v_normal_view;
in float v_scalar;

uniform vec3 u_color;        // flat colour when u_use_colormap is off
uniform bool u_use_colormap; // colour from v_scalar through u_colormap instead
uniform vec3 u_colormap[5];  // control colours at 0, 1/4, 1/2, 3/4, 1 (app/colormap.hpp)

out vec4 frag_color;

vec3 colormap(float t) {
    float x = clamp(t, 0.0, 1.0) * 4.0;
    int i = min(int(x), 3);
    return mix(u_colormap[i], u_colormap[i + 1], x - float(i));
}

void main() {
    vec3 normal = normalize(v_normal_view);
    vec3 to_eye = normalize(-v_position_view);
    // Back faces (seen through a cut or an inverted element) are shaded darker, not black.
    if (!gl_FrontFacing) normal = -normal;
    float diffuse = max(dot(normal, to_eye), 0.0);
    float specular = pow(diffuse, 48.0) * 0.25;
    vec3 base = u_use_colormap ? colormap(v_scalar) : u_color;
    vec3 color = base * (0.25 + 0.75 * diffuse) + vec3(specular);
    if (!gl_FrontFacing) color *= 0.5;
    frag_color = vec4(color, 1.0);
}
