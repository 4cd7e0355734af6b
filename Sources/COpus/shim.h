#ifndef RADIO_RELAY_COPUS_SHIM_H
#define RADIO_RELAY_COPUS_SHIM_H
#include <opus.h>

/* opus_encoder_ctl is variadic: one typed wrapper per request used. */
static inline int rr_opus_set_bitrate(OpusEncoder *e, opus_int32 v) { return opus_encoder_ctl(e, OPUS_SET_BITRATE(v)); }
static inline int rr_opus_set_vbr(OpusEncoder *e, opus_int32 v) { return opus_encoder_ctl(e, OPUS_SET_VBR(v)); }
static inline int rr_opus_set_vbr_constraint(OpusEncoder *e, opus_int32 v) {
    return opus_encoder_ctl(e, OPUS_SET_VBR_CONSTRAINT(v));
}
static inline int rr_opus_set_complexity(OpusEncoder *e, opus_int32 v) {
    return opus_encoder_ctl(e, OPUS_SET_COMPLEXITY(v));
}
static inline int rr_opus_set_signal(OpusEncoder *e, opus_int32 v) { return opus_encoder_ctl(e, OPUS_SET_SIGNAL(v)); }
static inline int rr_opus_set_prediction_disabled(OpusEncoder *e, opus_int32 v) {
    return opus_encoder_ctl(e, OPUS_SET_PREDICTION_DISABLED(v));
}
static inline int rr_opus_get_lookahead(OpusEncoder *e, opus_int32 *v) {
    return opus_encoder_ctl(e, OPUS_GET_LOOKAHEAD(v));
}
#endif
