include $(sort $(wildcard $(BR2_EXTERNAL_EDGED_PATH)/package/*/*.mk))
