// The hint is an inline function of the header; SwiftPM wants a source file for a C target.
#include "cprefetch.h"
