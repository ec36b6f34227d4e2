int plan_unused(void) { return 0; }
