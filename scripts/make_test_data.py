import os, itertools
G='/work/main/tests/data/good/'; B='/work/main/tests/data/bad/'
def w(p, s, mode='w'):
    with open(p, mode) as f: f.write(s)
def sub(a,b): return [a[i]-b[i] for i in range(3)]
def cross(a,b): return [a[1]*b[2]-a[2]*b[1], a[2]*b[0]-a[0]*b[2], a[0]*b[1]-a[1]*b[0]]
def dot(a,b): return sum(a[i]*b[i] for i in range(3))
def vol6(P,t): a,b,c,d=[P[i] for i in t]; return dot(cross(sub(b,a),sub(c,a)),sub(d,a))
def tet_faces(P,t):
    if vol6(P,t)<0: t=[t[0],t[2],t[1],t[3]]
    a,b,c,d=t
    return [(a,c,b),(a,b,d),(a,d,c),(b,c,d)]
def fmt(x): return repr(float(x)) if x!=int(x) else str(int(x))
def objtext(P, F, header):
    s=header
    for p in P: s+='v %s %s %s\n'%tuple(fmt(x) for x in p)
    for f in F: s+='f '+' '.join(str(i+1) for i in f)+'\n'
    return s
# cube corners, triangles outward
C=[(i,j,k) for k in (0,1) for j in (0,1) for i in (0,1)]  # index = i+2j+4k
def vid(i,j,k): return i+2*j+4*k
quads=[[(0,0,0),(0,1,0),(1,1,0),(1,0,0)],[(0,0,1),(1,0,1),(1,1,1),(0,1,1)],
       [(0,0,0),(1,0,0),(1,0,1),(0,0,1)],[(0,1,0),(0,1,1),(1,1,1),(1,1,0)],
       [(0,0,0),(0,0,1),(0,1,1),(0,1,0)],[(1,0,0),(1,1,0),(1,1,1),(1,0,1)]]
# good/cube_quads.obj: each quad has its own 4 vertices (24 v lines) + one unused vertex
s='# unit cube, one quad per face, vertices duplicated per face (welded on read)\nmtllib missing.mtl\no cube\n'
s+='v 5 5 5\n'  # unreferenced: dropped
for q in quads:
    for p in q: s+='v %d %d %d\n'%p
s+='vn 0 0 1\ng sides\n'
for n,q in enumerate(quads):
    base=2+4*n
    if n%2==0: s+='f %d %d %d %d\n'%(base,base+1,base+2,base+3)
    else: s+='f %d//1 %d//1 %d//1 %d//1\n'%(base,base+1,base+2,base+3)
w(G+'cube_quads.obj', s)
tris=[]
for q in quads:
    a,b,c,d=[vid(*p) for p in q]; tris += [(a,b,c),(a,c,d)]
# good/cube_mixed_orientation.obj: shared vertices, some triangles flipped (incl. the first)
mixed=[(t[0],t[2],t[1]) if n in (0,3,4,7,10) else t for n,t in enumerate(tris)]
w(G+'cube_mixed_orientation.obj', objtext(C, mixed, '# unit cube, 12 triangles, 5 of them flipped\n'))
# bad OBJ
w(B+'empty.obj','')
w(B+'out_of_range_index.obj', objtext(C, tris[:2], '# face 3 references vertex 12 of 8\n')+'f 1 2 12\n')
w(B+'zero_index.obj', objtext(C, tris[:2], '# OBJ indices start at 1\n')+'f 0 1 2\n')
Pn=[list(p) for p in C]
s=objtext(C, tris, '# vertex 5 has a NaN coordinate\n').split('\n')
s[1+4]='v 0 nan 1'
w(B+'nan_coordinate.obj','\n'.join(s))
s='# unit cube missing its top face: 4 boundary edges\n'
for p in C: s+='v %d %d %d\n'%p
for n,q in enumerate(quads):
    if n==1: continue
    s+='f '+' '.join(str(vid(*p)+1) for p in q)+'\n'
w(B+'open_surface.obj', s)
# two closed tetrahedra sharing edge A-B
P=[(0,0,0),(1,0,0),(0.5,1,0),(0.5,0.5,1),(0.5,-1,0),(0.5,-0.5,-1)]
F=tet_faces(P,[0,1,2,3])+tet_faces(P,[0,1,4,5])
w(B+'non_manifold_edge.obj', objtext(P,F,'# two closed tetrahedra sharing the edge 1-2: 4 triangles on one edge\n'))
# two closed tetrahedra sharing vertex A only
P=[(0,0,0),(1,0,0),(0,1,0),(0,0,1),(-1,0,0),(0,-1,0),(0,0,-1)]
F=tet_faces(P,[0,1,2,3])+tet_faces(P,[0,4,5,6])
w(B+'non_manifold_vertex.obj', objtext(P,F,'# two closed tetrahedra touching at vertex 1 only\n'))
w(B+'points_only.obj', objtext(C,[],'# points, no faces\n')+'p 1 2 3 4\n')
w(B+'lines_only.obj', objtext(C,[],'# polylines, no faces\n')+'l 1 2 3 4\nl 5 6\n')
w(B+'degenerate_triangle.obj', objtext([(0,0,0),(1,0,0),(2,0,0),(0,1,0)],[(0,1,3),(0,2,1)],'# triangle 2 has collinear vertices\n'))
# deterministic "random" bytes (LCG), with NULs and control bytes, no text header
x=12345; data=bytearray()
for i in range(512):
    x=(1103515245*x+12345)%(2**31); data.append((x>>16)&0xff)
data[0:4]=b'\x7fELF'; data[8]=0
w(B+'binary_garbage.obj', bytes(data), 'wb')
# self-intersecting: two overlapping closed cubes (surface checks pass, TetGen -d detects)
C2=[(p[0]+0.5,p[1]+0.5,p[2]+0.5) for p in C]
w(B+'self_intersecting.obj', objtext(C+C2, tris+[tuple(i+8 for i in t) for t in tris],
  '# two overlapping unit cubes, each closed and outward: passes surface checks, intersects itself\n'))
# ---- tet meshes: cube in 5 tets
T=[[vid(0,0,0),vid(1,0,0),vid(0,1,0),vid(0,0,1)],[vid(1,1,0),vid(1,0,0),vid(0,1,0),vid(1,1,1)],
   [vid(1,0,1),vid(1,0,0),vid(0,0,1),vid(1,1,1)],[vid(0,1,1),vid(0,1,0),vid(0,0,1),vid(1,1,1)],
   [vid(1,0,0),vid(0,1,0),vid(0,0,1),vid(1,1,1)]]
T=[t if vol6(C,t)>0 else [t[0],t[2],t[1],t[3]] for t in T]
assert sum(vol6(C,t) for t in T)==6
def node_text(P, base, attrs=0, marks=0, comment=''):
    s=comment+'%d 3 %d %d\n'%(len(P),attrs,marks)
    for n,p in enumerate(P):
        s+='%d  %s %s %s'%((n+base,)+tuple(fmt(x) for x in p))
        if attrs: s+=' '+' '.join('%g'%(0.5*n+k) for k in range(attrs))
        if marks: s+=' %d'%(n%2)
        s+='\n'
    return s
def ele_text(T, base, attrs=0, comment=''):
    s=comment+'%d %d %d\n'%(len(T),len(T[0]),attrs)
    for n,t in enumerate(T):
        s+='%d  '%(n+base)+' '.join(str(i+base) for i in t)+(' 7' if attrs else '')+'\n'
    return s
w(G+'cube.node', node_text(C,1,1,1,'# unit cube, 8 nodes, 1-based\n# <#points> <dim> <#attributes> <#markers>\n\n').replace('\n3  ','  # a comment after data\n3  ',1))
w(G+'cube.ele', ele_text(T,1,1,'# unit cube in 5 positively oriented tetrahedra, 1-based, one attribute\n'))
# 10-node variant: midside nodes appended after the corners (TetGen order: corners first)
P10=list(C); T10=[]
edges={}
for t in T:
    mids=[]
    for a,b in [(0,1),(1,2),(2,0),(0,3),(1,3),(2,3)]:
        key=tuple(sorted((t[a],t[b])))
        if key not in edges:
            edges[key]=len(P10); pa,pb=C[key[0]],C[key[1]]
            P10.append(tuple((pa[i]+pb[i])/2 for i in range(3)))
        mids.append(edges[key])
    T10.append(t+mids)
w(G+'cube10.node', node_text(P10,0,0,0,'# unit cube with mid-edge nodes, 0-based\n'))
w(G+'cube10.ele', ele_text(T10,0,0,'# 5 quadratic tetrahedra\n'))
inv=[0,2,1,3]; Pi=[(0,0,0),(1,0,0),(0,1,0),(0,0,1)]
assert vol6(Pi,inv)<0
w(G+'inverted_tet.node', node_text(Pi,0,0,0,'# one tetrahedron, 0-based\n'))
w(G+'inverted_tet.ele', ele_text([inv],0,0,'# listed with negative orientation\n'))
# bad node/ele
full_node=node_text(C,1,0,0); full_ele=ele_text(T,1,0)
nl=full_node.split('\n'); el=full_ele.split('\n')
w(B+'truncated.node','# declares 8 points, holds 5\n'+'\n'.join(nl[:6])+'\n')
w(B+'truncated.ele',full_ele)
w(B+'truncated_ele.node',full_node)
w(B+'truncated_ele.ele','# declares 5 tetrahedra, holds 3\n'+'\n'.join(el[:4])+'\n')
w(B+'bad_index.node',full_node)
w(B+'bad_index.ele',full_ele.replace('\n3  ','\n3  9 ',1).replace('\n3  9 '+' '.join(str(i+1) for i in T[2]), '\n3  '+' '.join(str(i+1) for i in T[2][:3])+' 9'))
nn=list(nl); nn[5]='5  1 nan 1'
w(B+'nan.node','\n'.join(nn)); w(B+'nan.ele',full_ele)
nn=list(nl); nn[3]='3  0 abc 0'
w(B+'not_a_number.node','\n'.join(nn)); w(B+'not_a_number.ele',full_ele)
w(B+'dim2.node',full_node.replace('8 3 0 0','8 2 0 0',1)); w(B+'dim2.ele',full_ele)
# ---- msh
def msh22(P,T,tris):
    s='$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$PhysicalNames\n1\n3 1 "solid"\n$EndPhysicalNames\n'
    s+='$Nodes\n%d\n'%len(P)+''.join('%d %s %s %s\n'%((n+1,)+tuple(fmt(x) for x in p)) for n,p in enumerate(P))+'$EndNodes\n'
    els=['15 2 0 1 1']+['2 2 0 1 %d %d %d'%tuple(i+1 for i in t) for t in tris]+['4 2 1 1 %d %d %d %d'%tuple(i+1 for i in t) for t in T]
    s+='$Elements\n%d\n'%len(els)+''.join('%d %s\n'%(n+1,e) for n,e in enumerate(els))+'$EndElements\n'
    return s
w(G+'cube_v22.msh', msh22(C,T,tris[:2]))
tag=lambda i: 10*(i+1)
s='$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Entities\n1 0 1 1\n1 0 0 0 0\n1 0 0 0 1 1 1 0 0\n1 0 0 0 1 1 1 0 0\n$EndEntities\n'
s+='$Comments\nsparse node tags 10..80, one parametric block\n$EndComments\n'
s+='$Nodes\n2 8 10 80\n3 1 0 4\n'+''.join('%d\n'%tag(i) for i in range(4))+''.join('%d %d %d\n'%C[i] for i in range(4))
s+='2 1 1 4\n'+''.join('%d\n'%tag(i) for i in range(4,8))+''.join('%d %d %d 0.25 0.5\n'%C[i] for i in range(4,8))+'$EndNodes\n'
s+='$Elements\n3 8 1 8\n0 1 15 1\n1 %d\n'%tag(0)
s+='2 1 2 2\n'+''.join('%d %d %d %d\n'%((n+2,)+tuple(tag(i) for i in tris[n])) for n in range(2))
s+='3 1 4 5\n'+''.join('%d %d %d %d %d\n'%((n+4,)+tuple(tag(i) for i in T[n])) for n in range(5))+'$EndElements\n'
w(G+'cube_v41.msh', s)
w(B+'binary.msh', b'$MeshFormat\n4.1 1 8\n\x01\x00\x00\x00\n$EndMeshFormat\n$Nodes\n\x00\x01\x02\xff\xfe\n', 'wb')
m=msh22(C,T,tris[:2]).split('\n')
i=m.index('$Nodes')
w(B+'truncated.msh', '\n'.join(m[:i+2+5])+'\n')
w(B+'bad_index.msh', msh22(C,T,tris[:2]).replace('4 2 1 1 %d %d %d %d'%tuple(i+1 for i in T[4]), '4 2 1 1 %d %d %d 99'%tuple(i+1 for i in T[4][:3])))
w(B+'nan.msh', msh22(C,T,tris[:2]).replace('\n3 0 1 0\n','\n3 0 inf 0\n'))
w(B+'no_tets.msh', msh22(C,[],tris))
