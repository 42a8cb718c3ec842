#include "CWinkOverlay.h"
