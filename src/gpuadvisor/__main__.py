from gpuadvisor.interfaces.cli import main

main()
