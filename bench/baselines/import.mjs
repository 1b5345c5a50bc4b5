// Import cost probe: imports the module named in argv[2] (nothing without one) and exits. Timed
// from spawn to exit, its peak RSS read by /usr/bin/time.
if (process.argv[2] !== undefined) await import(process.argv[2]);
