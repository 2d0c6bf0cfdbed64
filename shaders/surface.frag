// Headlight shading: the light sits at the camera, so every visible front face is lit.
#version 330 core

in vec3 v_position_view;
in vec3 v_normal_view;

uniform vec3 u_color;

out vec4 frag_color;

void main() {
    vec3 normal = normalize(v_normal_view);
    vec3 to_eye = normalize(-v_position_view);
    // Back faces (seen through a cut or an inverted element) are shaded darker, not black.
    if (!gl_FrontFacing) normal = -normal;
    float diffuse = max(dot(normal, to_eye), 0.0);
    float specular = pow(diffuse, 48.0) * 0.25;
    vec3 color = u_color * (0.25 + 0.75 * diffuse) + vec3(specular);
    if (!gl_FrontFacing) color *= 0.5;
    frag_color = vec4(color, 1.0);
}
