#include <cute/tensor.hpp>
#include <cute/atom/mma_atom.hpp>
#include <cute/atom/mma_traits_sm80.hpp>
#include <cute/atom/mma_traits_sm90_gmma.hpp>
using namespace cute;
template <class T> void dump(T const& mma) {
  print(mma); print("\n");
  auto tv = mma.get_layoutC_TV();
  print("TV: "); print(tv); print("\n");
  auto M = tile_size<0>(mma); auto N = tile_size<1>(mma);
  printf("TILE %d %d\n", int(M), int(N));
  for (int t = 0; t < size<0>(tv); ++t) for (int v = 0; v < size<1>(tv); ++v) { int idx = tv(t, v); printf("%d %d %d %d\n", t, v, idx % int(M), idx / int(M)); }
  printf("END\n");
}
int main() {
  dump(make_tiled_mma(SM80_16x8x16_F32F16F16F32_TN{}, Layout<Shape<_2,_2,_1>>{}, Tile<_32,_32,_16>{}));
  dump(make_tiled_mma(SM80_16x8x16_F32F16F16F32_TN{}, Layout<Shape<_2,_2,_1>, Stride<_2,_1,_0>>{}, Tile<_64,_32,_16>{}));
  dump(make_tiled_mma(SM90_64x128x16_F32F16F16_SS<GMMA::Major::K, GMMA::Major::K>{}, Layout<Shape<_2,_1,_1>>{}));
  dump(make_tiled_mma(SM90_64x128x16_F32F16F16_SS<GMMA::Major::K, GMMA::Major::K>{}, Layout<Shape<_3,_1,_1>>{}, Tile<_192,_256,_16>{}));
}
