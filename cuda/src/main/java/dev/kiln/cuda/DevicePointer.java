package dev.kiln.cuda;

import jcuda.driver.CUdeviceptr;

/** A device pointer whose address can be handed to native libraries called through Panama (cuBLAS). */
final class DevicePointer extends CUdeviceptr {
    /** The device address. */
    long address() {
        return getNativePointer();
    }
}
