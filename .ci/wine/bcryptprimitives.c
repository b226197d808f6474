/* bcryptprimitives.dll for Wine 8.
 *
 * Go >= 1.22 on Windows draws its random numbers from ProcessPrng in bcryptprimitives.dll, a system DLL
 * of Windows 10 and later that Wine 8 does not ship, so Go test binaries die at start-up under it. This
 * stand-in exports ProcessPrng and fills the buffer from RtlGenRandom (advapi32's SystemFunction036).
 * `go tool mage windows` compiles it with mingw into the Wine prefix's system32. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
    const SIZE_T max_chunk = 0x7fffffff; /* RtlGenRandom takes a ULONG length */
    while (len > 0) {
        ULONG n = (ULONG)(len < max_chunk ? len : max_chunk);
        if (!SystemFunction036(data, n)) {
            return FALSE;
        }
        data += n;
        len -= n;
    }
    return TRUE;
}
