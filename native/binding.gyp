{
  "targets": [
    {
      "target_name": "dw_spawn",
      "sources": ["src/spawn.c"],
      "cflags": ["-std=gnu11", "-Wall", "-Wextra", "-Wno-unused-parameter"]
    }
  ]
}
