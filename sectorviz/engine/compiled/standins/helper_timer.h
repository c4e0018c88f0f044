// sectorviz: a stand-in for the CUDA samples' host helper header helper_timer.h (host timers):
// declarations of what host code calls (never defined: host code is compiled, never linked or
// run). A real one wins.
#pragma once
#include "sectorviz_api.h"
// what the real one brings with it (NVRTC: its stand-ins, nvrtc/)
#include <ctime>

class StopWatchInterface {
public:
    SECTORVIZ_API virtual ~StopWatchInterface() {}
    SECTORVIZ_API virtual void start() = 0;
    SECTORVIZ_API virtual void stop() = 0;
    SECTORVIZ_API virtual void reset() = 0;
    SECTORVIZ_API virtual float getTime() = 0;
    SECTORVIZ_API virtual float getAverageTime() = 0;
};
SECTORVIZ_API bool sdkCreateTimer(StopWatchInterface **timer);
SECTORVIZ_API bool sdkDeleteTimer(StopWatchInterface **timer);
SECTORVIZ_API bool sdkStartTimer(StopWatchInterface **timer);
SECTORVIZ_API bool sdkStopTimer(StopWatchInterface **timer);
SECTORVIZ_API bool sdkResetTimer(StopWatchInterface **timer);
SECTORVIZ_API float sdkGetTimerValue(StopWatchInterface **timer);
SECTORVIZ_API float sdkGetAverageTimerValue(StopWatchInterface **timer);
