"""The ctypes image of the driver's launch structures matches cuda.h's layout (CUDA 12/13):
field offsets, sizes, and the cluster attribute where a launch with clusters needs it."""

import ctypes

from argus.runtime.driver_launch import (CLUSTER_DIMENSION, PROGRAMMATIC_SERIALIZATION,
                                         DriverLauncher, LaunchAttribute, LaunchConfig)


def test_layout_of_the_launch_config():
    offsets = {name: getattr(LaunchConfig, name).offset for name, _ in LaunchConfig._fields_}
    assert offsets == {"gridDimX": 0, "gridDimY": 4, "gridDimZ": 8, "blockDimX": 12,
                       "blockDimY": 16, "blockDimZ": 20, "sharedMemBytes": 24,
                       "hStream": 32, "attrs": 40, "numAttrs": 48}
    assert ctypes.sizeof(LaunchConfig) == 56
    assert LaunchAttribute.value.offset == 8 and ctypes.sizeof(LaunchAttribute) == 72


def test_the_cluster_attribute_matches_the_binding():
    from cuda.bindings import driver
    assert CLUSTER_DIMENSION == int(driver.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION)
    assert PROGRAMMATIC_SERIALIZATION == int(
        driver.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION)


def test_configs_with_and_without_a_cluster():
    address, (config, attrs) = DriverLauncher.config((132, 1, 1), 384, 200000, 7, (2, 1, 1))
    assert address == ctypes.addressof(config)
    assert (config.gridDimX, config.blockDimX, config.sharedMemBytes, config.hStream) == \
        (132, 384, 200000, 7)
    assert config.numAttrs == 1 and config.attrs[0].id == CLUSTER_DIMENSION
    assert tuple(config.attrs[0].value[:3]) == (2, 1, 1)
    _, (plain, _) = DriverLauncher.config((4, 2, 1), 128, 0, 0, (1, 1, 1))
    assert plain.numAttrs == 0 and plain.hStream is None


def test_a_programmatic_launch_carries_its_attribute_beside_the_cluster():
    _, (config, _) = DriverLauncher.config((132, 1, 1), 384, 200000, 7, (2, 1, 1), True)
    assert config.numAttrs == 2
    assert config.attrs[0].id == CLUSTER_DIMENSION and tuple(config.attrs[0].value[:3]) == (2, 1, 1)
    # programmaticStreamSerializationAllowed is the value union's first int
    assert config.attrs[1].id == PROGRAMMATIC_SERIALIZATION and config.attrs[1].value[0] == 1
    _, (alone, _) = DriverLauncher.config((4, 1, 1), 128, 0, 0, (1, 1, 1), True)
    assert alone.numAttrs == 1 and alone.attrs[0].id == PROGRAMMATIC_SERIALIZATION


def test_no_libcuda_means_the_binding_path():
    # this machine has no driver: load() says so instead of failing
    loaded = DriverLauncher.load(0)
    assert loaded is None or hasattr(loaded, "launch")
