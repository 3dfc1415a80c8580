import sys

from gpuadvisor.bench.cli import main

sys.exit(main())
