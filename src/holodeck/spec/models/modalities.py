"""What an agent takes in and gives out besides text (an image's `interaction.modalities`)."""

from __future__ import annotations

from typing import Literal

InputModality = Literal["text", "image", "audio", "video", "file"]
OutputModality = Literal["text", "image", "audio"]
