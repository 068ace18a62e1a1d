// End-to-end fixture for native-name demangling (tests/native-names):
// namespaced, templated and overloaded functions and a lambda, each a real
// out-of-line function that burns CPU, so samples land in all of them;
// std::hash<std::string> runs std::_Hash_bytes in libstdc++.so (resolved
// by the offline tools' own ELF reader, not the symmap).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <string>
#include <vector>

namespace geo {

static volatile uint64_t sink;

template <typename T> struct Grid {
    std::vector<T> cells;
    explicit Grid(size_t n) : cells(n) {}
    __attribute__((noinline)) T sum_cells() const
    {
        T s = 0;
        for (int r = 0; r < 2000; r++)
            for (size_t i = 0; i < cells.size(); i++)
                s += cells[i] * (T)(r + 1);
        return s;
    }
};

__attribute__((noinline)) uint64_t scale(int x)
{
    uint64_t a = (uint64_t)x;
    for (int i = 0; i < 3000000; i++)
        a = a * 6364136223846793005ull + 1442695040888963407ull;
    return a;
}

__attribute__((noinline)) uint64_t scale(double x)
{
    double a = x;
    for (int i = 0; i < 3000000; i++)
        a = a * 1.0000001 + 0.5;
    return (uint64_t)a;
}

} // namespace geo

static double cpu_seconds()
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 0.6;
    geo::Grid<int> gi(4096);
    geo::Grid<double> gd(4096);
    auto mix = [&](uint64_t v) __attribute__((noinline)) {
        uint64_t h = v;
        for (int i = 0; i < 2000000; i++)
            h ^= (h << 7) + (h >> 3) + (uint64_t)i;
        return h;
    };
    std::string text(1 << 16, 'x'); // hashed by std::_Hash_bytes, in libstdc++.so
    double start = cpu_seconds();
    while (cpu_seconds() - start < seconds) {
        geo::sink = geo::sink + (uint64_t)gi.sum_cells();
        geo::sink = geo::sink + (uint64_t)gd.sum_cells();
        geo::sink = geo::sink + geo::scale(3);
        geo::sink = geo::sink + geo::scale(2.5);
        geo::sink = geo::sink + mix(geo::sink);
        for (int i = 0; i < 40; i++) {
            text[(size_t)i] = (char)('a' + (geo::sink + (uint64_t)i) % 26);
            geo::sink = geo::sink + std::hash<std::string>{}(text);
        }
    }
    printf("%llu\n", (unsigned long long)geo::sink);
    return 0;
}
