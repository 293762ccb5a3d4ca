from kernelopt.worker.server import main

main()
