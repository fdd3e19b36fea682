/* The edge forest's model (forest.c), embedded in the library at build time: the bytes of
 * DIASEG_FOREST_MODEL (app/lib/forest/edges.dsf, written by tests/bsds/fit_forest.c) between
 * app_forest_blob and app_forest_blob_end. */
__asm__(".section .rodata\n"
        ".balign 16\n"
        ".globl app_forest_blob\n"
        ".hidden app_forest_blob\n"
        "app_forest_blob:\n"
        ".incbin \"" DIASEG_FOREST_MODEL "\"\n"
        ".globl app_forest_blob_end\n"
        ".hidden app_forest_blob_end\n"
        "app_forest_blob_end:\n"
        ".byte 0\n"
        ".previous\n");
