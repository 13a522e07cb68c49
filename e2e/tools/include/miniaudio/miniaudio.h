/*
 * A stand-in for miniaudio.h, which llama.cpp's multimodal helper
 * (tools/mtmd/mtmd-helper.cpp) includes to decode audio input. Go module
 * zips leave out vendor directories, so Ollama's module has no copy, and
 * Debian does not package it. Ruckus never sends audio: every decoder call
 * here fails, which the helper reports as an unreadable audio file.
 *
 * Only what mtmd-helper.cpp uses when MA_NO_ENCODING is defined is declared.
 */
#ifndef RUCKUS_MINIAUDIO_STUB_H
#define RUCKUS_MINIAUDIO_STUB_H

#include <stddef.h>
#include <stdint.h>

typedef int ma_result;
typedef uint32_t ma_uint32;
typedef uint64_t ma_uint64;

#define MA_SUCCESS 0
#define MA_NOT_IMPLEMENTED (-29)

typedef enum {
	ma_format_unknown = 0,
	ma_format_u8 = 1,
	ma_format_s16 = 2,
	ma_format_s24 = 3,
	ma_format_s32 = 4,
	ma_format_f32 = 5
} ma_format;

typedef struct {
	ma_format format;
	ma_uint32 channels;
	ma_uint32 sampleRate;
} ma_decoder_config;

typedef struct {
	int unused;
} ma_decoder;

static inline ma_decoder_config ma_decoder_config_init(ma_format format, ma_uint32 channels, ma_uint32 sampleRate)
{
	ma_decoder_config c;
	c.format = format;
	c.channels = channels;
	c.sampleRate = sampleRate;
	return c;
}

static inline ma_result ma_decoder_init_memory(const void *data, size_t size, const ma_decoder_config *config, ma_decoder *decoder)
{
	(void)data;
	(void)size;
	(void)config;
	(void)decoder;
	return MA_NOT_IMPLEMENTED;
}

static inline ma_result ma_decoder_get_length_in_pcm_frames(ma_decoder *decoder, ma_uint64 *length)
{
	(void)decoder;
	if (length != NULL) {
		*length = 0;
	}
	return MA_NOT_IMPLEMENTED;
}

static inline ma_result ma_decoder_read_pcm_frames(ma_decoder *decoder, void *frames, ma_uint64 count, ma_uint64 *read)
{
	(void)decoder;
	(void)frames;
	(void)count;
	if (read != NULL) {
		*read = 0;
	}
	return MA_NOT_IMPLEMENTED;
}

static inline ma_result ma_decoder_uninit(ma_decoder *decoder)
{
	(void)decoder;
	return MA_SUCCESS;
}

#endif /* RUCKUS_MINIAUDIO_STUB_H */
