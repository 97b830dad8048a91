/**
 * Schedules, the loop IR and its passes, the reference interpreter, NDArray, targets and the
 * {@code Backend} SPI, the graph level and the ONNX importer. Exported: what a user writes or
 * reads. Internals that other Kiln modules need are exported only to them (the model is the JDK's
 * {@code java.lang.classfile} against {@code jdk.internal.classfile.impl}).
 */
@SuppressWarnings({"module", "requires-automatic", "requires-transitive-automatic"
}) // exports to modules built later; commons-math3 and protobuf-java are automatic modules
module dev.kiln.lowering {
    requires transitive dev.kiln.dsl;
    // Schedule.fromJson/StepJson take and give Jackson trees; OnnxImporter takes a protobuf ModelProto
    requires transitive com.fasterxml.jackson.databind;
    requires transitive com.google.protobuf;
    requires commons.math3;

    exports dev.kiln.tir;
    exports dev.kiln.lower;
    exports dev.kiln.schedule;
    exports dev.kiln.schedule.layout;
    exports dev.kiln.runtime;
    exports dev.kiln.interp;
    exports dev.kiln.target;
    exports dev.kiln.graph;
    exports dev.kiln.graph.pass;
    exports dev.kiln.models;
    exports dev.kiln.onnx;
    exports dev.kiln.onnx.proto;
    exports dev.kiln.graph.fuse;

    // internals: the simplifier's bounds (CUDA code generation), the simplifier (the JVM backend's
    // register promotion), the loop-IR JSON form (the measure worker's protocol)
    exports dev.kiln.arith to
            dev.kiln.jit,
            dev.kiln.cuda;
    exports dev.kiln.tir.json to
            dev.kiln.autoschedule;

    uses dev.kiln.target.Backend;
}
