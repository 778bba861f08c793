    /* Added by sass-embedded's tasks/rubies/windows/ruby.sh, for its tests
     * under Wine only (nothing changes where ntdll is not Wine's): Wine 10's
     * ucrtbase keeps its descriptor table as the UCRT does (blocks of 64,
     * the flags at 0x38), but its _isatty loads the table with
     * "lea rcx,[rip+rel32]" just before "sar edx,6", and ends in
     * "add rsp,_; pop rbx; ret", which the search above does not take. */
    if (p && GetProcAddress(GetModuleHandleA("ntdll.dll"), "wine_get_version")) {
        for (pend = p; pend < p + 100; pend++) {
            if (memcmp(pend, "\x48\x8d\x0d", 3) == 0 && memcmp(pend + 7, "\xc1\xfa\x06", 3) == 0) {
                p = pend;
                goto found;
            }
        }
    }
