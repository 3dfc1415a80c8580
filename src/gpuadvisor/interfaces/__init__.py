"""Where users meet gpuadvisor: the CLI, the Python API, config files and output formats."""
