set -e
cd scratch/kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
nvcc -std=c++17 -O3 -arch=sm_90 -DOPBENCH_HAVE_CUDA -I ../../lib -I . -Dkernels=kernels_old -c old/gemv_kernel.cu -o old.o
nvcc -std=c++17 -O3 -arch=sm_90 -DOPBENCH_HAVE_CUDA -I ../../lib -I . -c bench.cu -o b.o
nvcc -arch=sm_90 b.o old.o -o bench
./bench 2>&1 | tee $OUT/bench.txt
