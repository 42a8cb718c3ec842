// The WinkCodecs plugin has no public header of its own: its interface is CWinkCodecsLoader/include/WinkCodecs.h.
