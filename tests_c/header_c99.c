/* The header alone must compile as strict C99 (see CMakeLists.txt for the flags). */
#include "stream_alloc.h"

int sa_header_compiles(void);
int sa_header_compiles(void) {
    sa_status s = SA_OK;
    return (int)s + (int)sizeof(sa_stage);
}
