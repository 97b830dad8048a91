/**
 * The auto-scheduler. Exported: the facade ({@code .tune}: {@code AutoSchedule}, {@code TuneOptions},
 * {@code TuneResult}), whole networks ({@code .network}), the task scheduler, the tuning log, the
 * search, measurement and cost models a user configures or replaces, and the root's
 * {@code SearchTask}/{@code HardwareParams}/{@code Candidate}. The GPU sampling rules are exported to the CUDA
 * module only.
 */
@SuppressWarnings("module") // exports to dev.kiln.cuda, built later
module dev.kiln.autoschedule {
    requires transitive dev.kiln.lowering;
    requires java.management;
    requires me.tongfei.progressbar;

    exports dev.kiln; // Kiln.compile: the untuned way from a computation to a kernel
    exports dev.kiln.autoschedule;
    exports dev.kiln.autoschedule.tune;
    exports dev.kiln.autoschedule.network;
    exports dev.kiln.autoschedule.scheduler;
    exports dev.kiln.autoschedule.log;
    exports dev.kiln.autoschedule.search;
    exports dev.kiln.autoschedule.measure;
    exports dev.kiln.autoschedule.model;
    exports dev.kiln.autoschedule.mutation;
    exports dev.kiln.autoschedule.evolution;
    exports dev.kiln.autoschedule.transfer;
    exports dev.kiln.autoschedule.progress;
    // what custom sketch rules, search policies and cost models are written against (access
    // analysis, sketches, annotation, program features)
    exports dev.kiln.autoschedule.analysis;
    exports dev.kiln.autoschedule.sketch;
    exports dev.kiln.autoschedule.annotate;
    exports dev.kiln.autoschedule.feature;

    // internal: the GPU sampling rules, for the CUDA module's measurer and tests
    exports dev.kiln.autoschedule.gpu to
            dev.kiln.cuda;

    // the pretrained model's saved form is read and written by Jackson's data binding
    opens dev.kiln.autoschedule.model to
            com.fasterxml.jackson.databind;

    uses dev.kiln.autoschedule.measure.MeasurerProvider;
}
